#include "aos/configuration.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "aos/configuration_maps.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::configuration {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class ConfigurationTest : public ::testing::Test {
 protected:
  // Writes `contents` to `name` (relative to a fresh directory); returns its
  // path.
  std::string Write(const std::string& name, std::string_view contents) {
    const std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    std::ofstream(path) << contents;
    return path;
  }

  FlatbufferDetachedBuffer<Configuration> Read(
      const std::string& path, const ReadConfigOptions& options = {}) {
    auto config = ReadConfig(path, options);
    EXPECT_TRUE(config.ok()) << config.status().message();
    return std::move(config).value();
  }

  // The error reading `json` as a single file called bad.json.
  std::string ErrorOf(std::string_view json) {
    const std::string path = Write("bad.json", json);
    auto config = ReadConfig(path);
    EXPECT_FALSE(config.ok()) << "read fine:\n"
                              << ConfigurationToJson(config->message());
    return config.ok() ? "" : std::string(config.status().message());
  }

  std::string dir_ = aos::testing::TestTempDir();
};

std::string ChannelNames(const Configuration& config) {
  std::string names;
  for (const Channel* channel : *config.channels()) {
    names += channel->name()->str() + ":" + channel->type()->str() + " ";
  }
  return names;
}

TEST_F(ConfigurationTest, MergesImportsFirstAndLaterFieldsWin) {
  Write("sub/base.json", R"({
    "channels": [ { "name": "/a", "type": "T", "max_size": 64, "frequency": 10 } ],
    "channel_storage_duration": 1000 })");
  const std::string main = Write("main.json", R"({
    "imports": [ "sub/base.json" ],
    "channels": [ { "name": "/a", "type": "T", "frequency": 20 } ] })");
  const auto config = Read(main);
  ASSERT_EQ(config.message().channels()->size(), 1u);
  const Channel& a = *config.message().channels()->Get(0);
  EXPECT_EQ(a.max_size(), 64);
  EXPECT_EQ(a.frequency(), 20);
  EXPECT_EQ(config.message().channel_storage_duration(), 1000);
  EXPECT_EQ(config.message().imports(), nullptr);
}

TEST_F(ConfigurationTest, ExplicitDefaultInALaterFileStillWins) {
  Write(
      "base.json",
      R"({ "channels": [ { "name": "/a", "type": "T", "frequency": 10 } ] })");
  const std::string main = Write("main.json", R"({
    "imports": [ "base.json" ],
    "channels": [ { "name": "/a", "type": "T", "frequency": 100 } ] })");
  EXPECT_EQ(Read(main).message().channels()->Get(0)->frequency(), 100);
}

TEST_F(ConfigurationTest, TheImportersStorageDurationWinsOverTheImported) {
  Write("base.json", R"({ "channel_storage_duration": 2000000000 })");
  const std::string main = Write("main.json", R"({ "imports": [ "base.json" ],
                                                   "channel_storage_duration": 10000000000 })");
  EXPECT_EQ(Read(main).message().channel_storage_duration(), 10000000000);
}

TEST_F(ConfigurationTest, ImportsAreRelativeToTheImportingFile) {
  Write("b/b.json", R"({ "channels": [ { "name": "/b", "type": "T" } ] })");
  Write("a/a.json", R"({ "imports": [ "../b/b.json" ],
                          "channels": [ { "name": "/a", "type": "T" } ] })");
  const std::string main =
      Write("main.json", R"({ "imports": [ "a/a.json" ] })");
  EXPECT_EQ(ChannelNames(Read(main).message()), "/a:T /b:T ");
}

TEST_F(ConfigurationTest, AFileImportedTwiceIsRefused) {
  // As in AOS: a second import would merge the file again, over what came
  // between.
  Write("common.json", R"({ "nodes": [ { "name": "pi1" } ] })");
  Write("left.json", R"({ "imports": [ "common.json" ] })");
  Write("right.json", R"({ "imports": [ "common.json" ] })");
  auto config = ReadConfig(
      Write("main.json", R"({ "imports": [ "left.json", "right.json" ] })"));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(
      config.status().message(),
      StrCat(dir_, "/right.json: imports ", dir_, "/common.json, which ", dir_,
             "/left.json already imported; import each file in one "
             "place"));
}

TEST_F(ConfigurationTest, ChannelsAreSortedByNameThenType) {
  const std::string path = Write("c.json", R"({ "channels": [
    { "name": "/z", "type": "A" }, { "name": "/a", "type": "B" },
    { "name": "/a", "type": "A" }, { "name": "/aos", "type": "A" } ] })");
  EXPECT_EQ(ChannelNames(Read(path).message()), "/a:A /a:B /aos:A /z:A ");
}

TEST_F(ConfigurationTest, FlattenedJsonReadsBackTheSame) {
  Write("base.json",
        R"({ "channels": [ { "name": "/b", "type": "T", "max_size": 16 } ] })");
  const std::string main = Write("main.json", R"({ "imports": [ "base.json" ],
      "channels": [ { "name": "/a", "type": "T", "frequency": 5 } ],
      "maps": [ { "match": { "name": "/c" }, "rename": { "name": "/a" } } ] })");
  const std::string flat = ConfigurationToJson(Read(main).message());
  const std::string flat_path = Write("flat.json", flat);
  EXPECT_EQ(ConfigurationToJson(Read(flat_path).message()), flat);
}

TEST_F(ConfigurationTest, ReadsTheBinaryForm) {
  const std::string path =
      Write("c.json", R"({ "channels": [ { "name": "/a", "type": "T" } ] })");
  const auto config = Read(path);
  const std::string bfbs = dir_ + "/c.bfbs";
  std::ofstream(bfbs, std::ios::binary)
      .write(reinterpret_cast<const char*>(config.span().data()),
             config.span().size());
  EXPECT_EQ(ConfigurationToJson(Read(bfbs).message()),
            ConfigurationToJson(config.message()));

  const std::string garbage =
      Write("garbage.bfbs", "definitely not a flatbuffer");
  auto bad = ReadConfig(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              AllOf(HasSubstr("garbage.bfbs"),
                    HasSubstr("not a binary aos.Configuration")));
}

TEST_F(ConfigurationTest, StorageDurationFallsBackToTheConfigs) {
  const std::string path = Write("c.json", R"({
    "channel_storage_duration": 500000000,
    "channels": [ { "name": "/a", "type": "T" },
                  { "name": "/b", "type": "T", "channel_storage_duration": 7 } ] })");
  const auto config = Read(path);
  EXPECT_EQ(ChannelStorageDurationNs(config.message(),
                                     *config.message().channels()->Get(0)),
            500000000);
  EXPECT_EQ(ChannelStorageDurationNs(config.message(),
                                     *config.message().channels()->Get(1)),
            7);
}

// ceil(frequency x storage), exactly: 100 a second for 70 ms is 7 (a double
// product is 7.000000000000001, which ceil makes 8), 3 a second for 0.5 s
// is 2; never 0.
TEST_F(ConfigurationTest, QueueSizeIsTheExactCeilingOfFrequencyTimesStorage) {
  const std::string path = Write("c.json", R"({
    "channels": [
      { "name": "/a", "type": "T", "frequency": 100,
        "channel_storage_duration": 70000000 },
      { "name": "/b", "type": "T", "frequency": 3,
        "channel_storage_duration": 500000000 },
      { "name": "/c", "type": "T", "frequency": 1,
        "channel_storage_duration": 1 } ] })");
  const auto config = Read(path);
  const auto size = [&](int i) {
    return ChannelQueueSize(config.message(),
                            *config.message().channels()->Get(i));
  };
  EXPECT_EQ(size(0), 7u);
  EXPECT_EQ(size(1), 2u);
  EXPECT_EQ(size(2), 1u);
}

// Validation sees the queue's messages unclamped: one more than a 32-bit
// index holds, with its sender and reader slots, is refused by name; one
// fewer is read.
TEST_F(ConfigurationTest, AQueueBeyondA32BitIndexIsRefused) {
  // 2147483647 a second for 2 s and 1 ns: 4294967297 messages (ceil),
  // over UINT32_MAX.
  EXPECT_THAT(ErrorOf(R"({ "channels": [
      { "name": "/big", "type": "T", "frequency": 2147483647,
        "channel_storage_duration": 2000000001 } ] })"),
              HasSubstr("frequency 2147483647 for 2000000001 ns is more "
                        "messages than a queue can hold"));
  // For 1 s: 2147483647 messages, which fit.
  const std::string path = Write("fits.json", R"({ "channels": [
      { "name": "/big", "type": "T", "frequency": 2147483647,
        "channel_storage_duration": 1000000000 } ] })");
  const auto config = Read(path);
  EXPECT_EQ(ChannelQueueMessages(config.message(),
                                 *config.message().channels()->Get(0)),
            2147483647u);
}

// Who reads a channel, and to whom it is forwarded, per node; also for a
// channel without source_node, which validation refuses but a damaged log's
// configuration may hold (not validated: read as plain JSON).
TEST_F(ConfigurationTest, ReadableAndForwardedPerNode) {
  auto parsed = JsonToFlatbuffer(R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" }, { "name": "pi3" } ],
    "channels": [
      { "name": "/a", "type": "T", "source_node": "pi1",
        "destination_nodes": [ { "name": "pi2" } ] },
      { "name": "/b", "type": "T", "source_node": "pi1" },
      { "name": "/c", "type": "T",
        "destination_nodes": [ { "name": "pi2" } ] } ] })",
                                 ConfigurationSchema());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Configuration& config =
      *flatbuffers::GetRoot<Configuration>(parsed->data());
  const Node* pi1 = config.nodes()->Get(0);
  const Node* pi2 = config.nodes()->Get(1);
  const Node* pi3 = config.nodes()->Get(2);
  struct Case {
    int channel;
    const Node* node;
    bool readable;
    bool forwarded;
  };
  for (const Case& c : std::vector<Case>{{0, pi1, true, false},
                                         {0, pi2, true, true},
                                         {0, pi3, false, false},
                                         {0, nullptr, true, false},
                                         {1, pi1, true, false},
                                         {1, pi2, false, false},
                                         {2, pi1, false, false},
                                         {2, pi2, true, true}}) {
    const Channel& channel = *config.channels()->Get(c.channel);
    SCOPED_TRACE(
        StrCat(channel.name()->string_view(), " on ",
               c.node == nullptr ? "no node" : c.node->name()->string_view()));
    EXPECT_EQ(ChannelIsReadableOnNode(channel, c.node), c.readable);
    EXPECT_EQ(ChannelIsForwardedTo(channel, c.node), c.forwarded);
  }
}

// Validation: every message names the file and the culprit.

TEST_F(ConfigurationTest, MalformedJsonNamesFileLineAndColumn) {
  EXPECT_THAT(ErrorOf("{\n  \"channels\": [\n    { \"name\": \"/a\" \"type\": "
                      "\"T\" }\n  ]\n}"),
              AllOf(HasSubstr("bad.json:3:"), HasSubstr("\"type\"")));
}

TEST_F(ConfigurationTest, UnknownFieldIsNamed) {
  EXPECT_THAT(
      ErrorOf(
          R"({ "channels": [ { "name": "/a", "type": "T", "frequncy": 5 } ] })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("frequncy")));
}

TEST_F(ConfigurationTest, MissingFileAndMissingImportAreNamed) {
  auto config = ReadConfig(dir_ + "/nowhere.json");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("nowhere.json: no such file"));
  EXPECT_THAT(
      ErrorOf(R"({ "imports": [ "missing/other.json" ] })"),
      AllOf(HasSubstr("bad.json: imported file "),
            HasSubstr("missing/other.json"), HasSubstr("does not exist")));
}

TEST_F(ConfigurationTest, ImportCycleIsNamed) {
  Write("a.json", R"({ "imports": [ "b.json" ] })");
  Write("b.json", R"({ "imports": [ "a.json" ] })");
  auto config = ReadConfig(dir_ + "/a.json");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr("import cycle"), HasSubstr("a.json imports "),
                    HasSubstr("b.json imports ")));
}

TEST_F(ConfigurationTest, NodesMergeByNameAcrossImports) {
  Write("nodes.json", R"({ "nodes": [ { "name": "pi2", "hostname": "old",
                                         "tags": [ "b" ] },
                                       { "name": "pi1" } ] })");
  const std::string main = Write("main.json", R"({ "imports": [ "nodes.json" ],
      "nodes": [ { "name": "pi2", "hostname": "new", "tags": [ "a" ] } ] })");
  const auto config = Read(main);
  ASSERT_EQ(config.message().nodes()->size(), 2u);
  // Sorted by name; the later hostname wins; tags are united, sorted.
  EXPECT_EQ(config.message().nodes()->Get(0)->name()->str(), "pi1");
  const Node& pi2 = *config.message().nodes()->Get(1);
  EXPECT_EQ(pi2.hostname()->str(), "new");
  ASSERT_EQ(pi2.tags()->size(), 2u);
  EXPECT_EQ(pi2.tags()->Get(0)->str(), "a");
  EXPECT_EQ(pi2.tags()->Get(1)->str(), "b");
}

// Imports are read defensively: each mistake is one line naming the path.

TEST_F(ConfigurationTest, ImportOfADeviceIsRefusedWithoutReadingIt) {
  // Before: /dev/zero was read until memory ran out.
  EXPECT_EQ(ErrorOf(R"({ "imports": [ "/dev/zero" ] })"),
            dir_ +
                "/bad.json: import /dev/zero: is a character device, not "
                "a regular file");
}

TEST_F(ConfigurationTest, ImportOfAFifoIsRefusedWithoutWaiting) {
  // Before: opening the FIFO waited for a writer forever.
  ASSERT_EQ(mkfifo((dir_ + "/pipe.json").c_str(), 0600), 0);
  EXPECT_EQ(ErrorOf(R"({ "imports": [ "pipe.json" ] })"),
            dir_ + "/bad.json: import " + dir_ +
                "/pipe.json: is a FIFO, not a regular file");
}

TEST_F(ConfigurationTest, ImportOfADirectoryIsNamedAsOne) {
  std::filesystem::create_directories(dir_ + "/sub");
  EXPECT_EQ(ErrorOf(R"({ "imports": [ "sub" ] })"),
            dir_ + "/bad.json: import " + dir_ +
                "/sub: is a directory, not a regular file");
  auto config = ReadConfig(dir_ + "/sub");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            dir_ + "/sub: is a directory, not a regular file");
}

TEST_F(ConfigurationTest, SymlinkLoopIsAnError) {
  // Before: std::filesystem::exists threw, and the exception ended the tool.
  std::filesystem::create_symlink(dir_ + "/b.json", dir_ + "/a.json");
  std::filesystem::create_symlink(dir_ + "/a.json", dir_ + "/b.json");
  EXPECT_EQ(ErrorOf(R"({ "imports": [ "a.json" ] })"),
            dir_ + "/bad.json: import " + dir_ +
                "/a.json: too many levels of symbolic links (a symlink loop)");
}

TEST_F(ConfigurationTest, OverlongNameIsAnError) {
  // Before: std::filesystem::exists threw ENAMETOOLONG.
  const std::string name = std::string(300, 'x') + ".json";
  EXPECT_THAT(ErrorOf(StrCat(R"({ "imports": [ ")", name, R"(" ] })")),
              AllOf(HasSubstr("bad.json: import "), HasSubstr(name),
                    HasSubstr(": file name too long (")));
  const std::string deep(5000, '/');
  auto config = ReadConfig(dir_ + deep + "a/" + std::string(5000, 'y'));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("file name too long"));
}

TEST_F(ConfigurationTest, FilesLargerThanTheLimitAreRefused) {
  Write("big.json", R"({ "channels": [ { "name": "/a", "type": "T" } ] })");
  const std::string main =
      Write("main.json", R"({ "imports": [ "big.json" ] })");
  ReadConfigOptions options;
  options.max_file_bytes = 40;
  auto config = ReadConfig(main, options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            StrCat(dir_, "/main.json: import ", dir_,
                   "/big.json: is 49 bytes, more than the limit of 40 bytes "
                   "for a config file"));
  // The default is far above any real config.
  EXPECT_EQ(Read(main).message().channels()->size(), 1u);
}

TEST_F(ConfigurationTest, ChannelNameMustStartWithSlash) {
  EXPECT_THAT(
      ErrorOf(R"({ "channels": [ { "name": "test", "type": "T" } ] })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("channel \"test\" (type T)"),
            HasSubstr("must start with '/'")));
}

TEST_F(ConfigurationTest, MaxSizeMustBePositiveAndMayBeUnaligned) {
  const std::string odd = Write(
      "odd.json",
      R"({ "channels": [ { "name": "/a", "type": "T", "max_size": 5 } ] })");
  EXPECT_EQ(Read(odd).message().channels()->Get(0)->max_size(), 5);
  EXPECT_THAT(
      ErrorOf(
          R"({ "channels": [ { "name": "/a", "type": "T", "max_size": 0 } ] })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("channel \"/a\""),
            HasSubstr("max_size 0 must be positive")));
}

TEST_F(ConfigurationTest, FrequencyMustBePositive) {
  EXPECT_THAT(
      ErrorOf(
          R"({ "channels": [ { "name": "/a", "type": "T", "frequency": 0 } ] })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("channel \"/a\""),
            HasSubstr("frequency 0")));
  EXPECT_THAT(
      ErrorOf(
          R"({ "channels": [ { "name": "/a", "type": "T", "frequency": -3 } ] })"),
      HasSubstr("frequency -3"));
}

TEST_F(ConfigurationTest, StorageDurationMustBePositive) {
  EXPECT_THAT(
      ErrorOf(R"({ "channel_storage_duration": 0 })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("channel_storage_duration 0")));
  EXPECT_THAT(ErrorOf(R"({ "channels": [ { "name": "/a", "type": "T",
                                           "channel_storage_duration": -1 } ] })"),
              AllOf(HasSubstr("channel \"/a\""),
                    HasSubstr("channel_storage_duration -1")));
}

TEST_F(ConfigurationTest, UnknownSourceAndDestinationNodesAreNamed) {
  EXPECT_THAT(
      ErrorOf(R"({ "nodes": [ { "name": "pi1" } ],
                           "channels": [ { "name": "/a", "type": "T", "source_node": "pi3" } ] })"),
      AllOf(HasSubstr("bad.json"), HasSubstr("channel \"/a\""),
            HasSubstr("source_node \"pi3\""), HasSubstr("its nodes are pi1")));
  EXPECT_THAT(ErrorOf(R"({ "nodes": [ { "name": "pi1" } ],
                           "channels": [ { "name": "/a", "type": "T", "source_node": "pi1",
                                           "destination_nodes": [ { "name": "roborio" } ] } ] })"),
              AllOf(HasSubstr("channel \"/a\""),
                    HasSubstr("destination_nodes names \"roborio\"")));
  // As in AOS, a config without nodes ignores the node fields.
  const std::string single = Write(
      "single.json",
      R"({ "channels": [ { "name": "/a", "type": "T", "source_node": "pi1" } ] })");
  EXPECT_EQ(Read(single).message().channels()->size(), 1u);
}

TEST_F(ConfigurationTest, MultiNodeChannelNeedsSourceNode) {
  EXPECT_THAT(ErrorOf(R"({ "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
                           "channels": [ { "name": "/a", "type": "T" } ] })"),
              AllOf(HasSubstr("bad.json"), HasSubstr("channel \"/a\" (type T)"),
                    HasSubstr("needs a source_node")));
}

TEST_F(ConfigurationTest, ApplicationNodesMustExist) {
  EXPECT_THAT(ErrorOf(R"({ "nodes": [ { "name": "pi1" } ],
                           "applications": [ { "name": "ping", "nodes": [ "pi9" ] } ] })"),
              AllOf(HasSubstr("application \"ping\""), HasSubstr("\"pi9\"")));
}

TEST_F(ConfigurationTest, EntriesWithoutNamesAreNamedByFile) {
  EXPECT_EQ(ErrorOf(R"({ "applications": [ { "args": [ "-v" ] } ] })"),
            dir_ + "/bad.json: an application has no name");
  EXPECT_EQ(ErrorOf(R"({ "nodes": [ { "hostname": "pi" } ] })"),
            dir_ + "/bad.json: node #0 has no name");
  EXPECT_EQ(ErrorOf(R"({ "channels": [ { "type": "T" } ] })"),
            dir_ + "/bad.json: a channel of type T has no name");
}

TEST_F(ConfigurationTest, MapLoopsAreRejected) {
  EXPECT_THAT(ErrorOf(R"({ "maps": [
      { "match": { "name": "/a" }, "rename": { "name": "/b" } },
      { "match": { "name": "/b" }, "rename": { "name": "/a" } } ] })"),
              AllOf(HasSubstr("bad.json"), HasSubstr("maps loop"),
                    HasSubstr("/a -> /b -> /a")));
  // Through an application's own maps too.
  EXPECT_THAT(
      ErrorOf(
          R"({ "maps": [ { "match": { "name": "/a" }, "rename": { "name": "/b" } } ],
      "applications": [ { "name": "pong",
        "maps": [ { "match": { "name": "/b" }, "rename": { "name": "/a" } } ] } ] })"),
      AllOf(HasSubstr("maps loop"), HasSubstr("application pong")));
  EXPECT_THAT(ErrorOf(R"({ "maps": [ { "match": { "name": "/a" } } ] })"),
              HasSubstr("without rename.name"));
  // A wildcard whose rename matches itself again grows without end.
  EXPECT_THAT(
      ErrorOf(R"({ "maps": [
      { "match": { "name": "/camera*" }, "rename": { "name": "/camera/front" } } ] })"),
      AllOf(HasSubstr("maps loop"), HasSubstr("/camera -> /camera/front -> ")));
}

// The map-loop check skips most (application, node) pairs; it must still
// find exactly the loops that following every map's chain for every
// application and node finds.
TEST_F(ConfigurationTest, MapLoopCheckAgreesWithFollowingEveryChain) {
  std::mt19937 random(971);
  const std::vector<std::string> names = {"/a", "/b", "/c", "/ab", "/a/b"};
  auto pick = [&](const std::vector<std::string>& from) {
    return from[random() % from.size()];
  };
  auto random_map = [&]() {
    std::string match = pick(names);
    if (random() % 4 == 0) match += "*";
    std::string map = StrCat(R"({ "match": { "name": ")", match, R"(")");
    // Written-empty type and node too: "" matches only type "" and no node.
    if (random() % 4 == 0) {
      StrAppend(&map, R"(, "type": ")", pick({"T", "T", "T", ""}), R"(")");
    }
    if (random() % 3 == 0) {
      StrAppend(&map, R"(, "source_node": ")", pick({"pi1", "pi2", "pi1", ""}),
                R"(")");
    }
    StrAppend(&map, R"( }, "rename": { "name": ")", pick(names), R"(" } })");
    return map;
  };
  int loops = 0;
  for (int round = 0; round < 4000; ++round) {
    std::vector<std::string> global;
    for (int i = random() % 5; i > 0; --i) global.push_back(random_map());
    std::string json =
        StrCat(R"({ "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
        "maps": [ )",
               StrJoin(global, ", "), R"( ], "applications": [ )");
    for (int app = 0; app < 2; ++app) {
      std::vector<std::string> maps;
      for (int i = random() % 3; i > 0; --i) maps.push_back(random_map());
      StrAppend(&json, app == 0 ? "" : ", ", R"({ "name": "app)", app,
                R"(", "maps": [ )", StrJoin(maps, ", "), " ] }");
    }
    json += " ] }";
    // Every map is valid, so only a loop fails reading.
    auto checked = ReadConfigFromJson(json);
    const bool refused = !checked.ok();
    if (refused) {
      ASSERT_THAT(checked.status().message(), HasSubstr("maps loop")) << json;
    }
    // Follow every chain, as lookup does.
    bool looped_anywhere = false;
    auto parsed = JsonToFlatbuffer(json, ConfigurationSchema());
    ASSERT_TRUE(parsed.ok());
    const Configuration& config =
        *flatbuffers::GetRoot<Configuration>(parsed->data());
    std::vector<const Map*> all_maps;
    for (const Map* map : *config.maps()) all_maps.push_back(map);
    for (const Application* application : *config.applications()) {
      for (const Map* map : *application->maps()) all_maps.push_back(map);
    }
    for (const Map* map : all_maps) {
      std::string start = map->match()->name()->str();
      if (start.ends_with('*')) start.pop_back();
      const std::string type =
          map->match()->type() == nullptr ? "" : map->match()->type()->str();
      for (std::string_view application : {"", "app0", "app1"}) {
        for (const Node* node :
             {static_cast<const Node*>(nullptr), config.nodes()->Get(0),
              config.nodes()->Get(1)}) {
          bool looped = false;
          MapChain(config, start, type, application, node, &looped);
          looped_anywhere = looped_anywhere || looped;
        }
      }
    }
    ASSERT_EQ(refused, looped_anywhere)
        << json << "\n"
        << (refused ? checked.status().message() : "");
    loops += refused;
  }
  // Both outcomes were exercised.
  EXPECT_GT(loops, 100);
  EXPECT_LT(loops, 3900);
}

TEST_F(ConfigurationTest, TypesWithoutSchemaAreNamed) {
  const std::string path = Write("c.json", R"({ "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage" },
      { "name": "/test", "type": "aos.testing.Nope" } ] })");
  auto config = ReadConfig(path, {.schema_paths = {aos::testing::ArtifactPath(
                                      "aos/testing/test_message.bfbs")},
                                  .embed_schemas = true});
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(
      config.status().message(),
      AllOf(
          HasSubstr("c.json: channel \"/test\" has type \"aos.testing.Nope\""),
          HasSubstr("test_message.bfbs")));
  EXPECT_THAT(config.status().message(),
              ::testing::Not(HasSubstr("testing.TestMessage\",")));
}

TEST_F(ConfigurationTest, SchemasAreEmbedded) {
  const std::string path = Write(
      "c.json",
      R"({ "channels": [ { "name": "/test", "type": "aos.testing.TestMessage" } ] })");
  const auto config = Read(
      path, {.schema_paths =
                 {aos::testing::ArtifactPath("aos/testing/test_message.bfbs"),
                  aos::testing::ArtifactPath("aos/testing/test_reply.bfbs")},
             .embed_schemas = true});
  const reflection::Schema* schema =
      config.message().channels()->Get(0)->schema();
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(schema->root_table()->name()->str(), "aos.testing.TestMessage");
  EXPECT_NE(schema->root_table()->fields()->LookupByKey("send_time"), nullptr);
}

// Lookup.

class GetChannelTest : public ConfigurationTest {
 protected:
  const Channel* Get(const Configuration& config, std::string_view name,
                     std::string_view type, std::string_view application,
                     const Node* node = nullptr) {
    why_not_.clear();
    return GetChannel(config, name, type, application, node, &why_not_);
  }
  std::string why_not_;
};

TEST_F(GetChannelTest, FindsByNameAndType) {
  const auto config = Read(Write("c.json", R"({ "channels": [
      { "name": "/a", "type": "T", "frequency": 1 }, { "name": "/a", "type": "U", "frequency": 2 },
      { "name": "/b", "type": "T", "frequency": 3 } ] })"));
  EXPECT_EQ(Get(config.message(), "/a", "U", "app")->frequency(), 2);
  EXPECT_EQ(Get(config.message(), "/b", "T", "app")->frequency(), 3);
  EXPECT_EQ(Get(config.message(), "/b", "U", "app"), nullptr);
  EXPECT_THAT(why_not_, AllOf(HasSubstr("channel /b of type U"),
                              HasSubstr("application app"),
                              HasSubstr("not in the config")));
}

TEST_F(GetChannelTest, AppliesMapsApplicationFirstLastWinsAndChains) {
  const auto config = Read(Write("c.json", R"({
    "channels": [ { "name": "/real", "type": "T" }, { "name": "/other", "type": "T" },
                  { "name": "/chained", "type": "T" }, { "name": "/typed", "type": "U" },
                  { "name": "/prefix/x", "type": "T" } ],
    "maps": [ { "match": { "name": "/alias" }, "rename": { "name": "/wrong" } },
              { "match": { "name": "/alias" }, "rename": { "name": "/real" } },
              { "match": { "name": "/one" }, "rename": { "name": "/two" } },
              { "match": { "name": "/two" }, "rename": { "name": "/chained" } },
              { "match": { "name": "/t", "type": "U" }, "rename": { "name": "/typed" } },
              { "match": { "name": "/glob/*" }, "rename": { "name": "/prefix/" } } ],
    "applications": [ { "name": "special",
        "maps": [ { "match": { "name": "/alias" }, "rename": { "name": "/other" } } ] } ] })"));
  const Configuration& c = config.message();
  EXPECT_EQ(MapChannelName(c, "/alias", "T", "app", nullptr), "/real");
  EXPECT_EQ(Get(c, "/alias", "T", "app")->name()->str(), "/real");
  EXPECT_EQ(Get(c, "/alias", "T", "special")->name()->str(), "/other");
  EXPECT_EQ(Get(c, "/one", "T", "app")->name()->str(), "/chained");
  EXPECT_EQ(Get(c, "/t", "U", "app")->name()->str(), "/typed");
  EXPECT_EQ(MapChannelName(c, "/t", "T", "app", nullptr), "/t");
  EXPECT_EQ(Get(c, "/glob/x", "T", "app")->name()->str(), "/prefix/x");
  EXPECT_EQ(Get(c, "/glob/y", "T", "app"), nullptr);
  EXPECT_THAT(why_not_,
              HasSubstr("channel /glob/y (mapped to /prefix/y) of type T"));
}

TEST_F(GetChannelTest, NodeRules) {
  const auto config = Read(Write("c.json", R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" }, { "name": "pi3" } ],
    "channels": [
      { "name": "/pi1/aos", "type": "T", "source_node": "pi1" },
      { "name": "/pi2/aos", "type": "T", "source_node": "pi2" },
      { "name": "/test", "type": "T", "source_node": "pi1",
        "destination_nodes": [ { "name": "pi2" } ] } ],
    "maps": [ { "match": { "name": "/aos", "source_node": "pi1" }, "rename": { "name": "/pi1/aos" } },
              { "match": { "name": "/aos", "source_node": "pi2" }, "rename": { "name": "/pi2/aos" } } ],
    "applications": [ { "name": "pinned", "nodes": [ "pi1" ] } ] })"));
  const Configuration& c = config.message();
  const Node* pi1 = GetNode(c, "pi1");
  const Node* pi2 = GetNode(c, "pi2");
  const Node* pi3 = GetNode(c, "pi3");
  ASSERT_NE(pi1, nullptr);
  EXPECT_EQ(GetNode(c, "pi4"), nullptr);
  EXPECT_TRUE(MultiNode(c));
  // Per-node maps.
  EXPECT_EQ(Get(c, "/aos", "T", "app", pi1)->name()->str(), "/pi1/aos");
  EXPECT_EQ(Get(c, "/aos", "T", "app", pi2)->name()->str(), "/pi2/aos");
  // Readable where it is sent from and where it goes.
  EXPECT_NE(Get(c, "/test", "T", "app", pi1), nullptr);
  EXPECT_NE(Get(c, "/test", "T", "app", pi2), nullptr);
  EXPECT_EQ(Get(c, "/test", "T", "app", pi3), nullptr);
  EXPECT_THAT(why_not_,
              AllOf(HasSubstr("not readable on node pi3"),
                    HasSubstr("source_node is pi1"), HasSubstr("goes to pi2")));
  // Only the source node may send.
  EXPECT_NE(
      GetChannel(c, "/test", "T", "app", pi1, &why_not_, ChannelAccess::kSend),
      nullptr);
  EXPECT_EQ(
      GetChannel(c, "/test", "T", "app", pi2, &why_not_, ChannelAccess::kSend),
      nullptr);
  EXPECT_THAT(why_not_,
              AllOf(HasSubstr("cannot be sent on node pi2"),
                    HasSubstr("only its source_node pi1 sends on it")));
  // A multi-node config needs the node.
  EXPECT_EQ(Get(c, "/test", "T", "app", nullptr), nullptr);
  EXPECT_THAT(why_not_, HasSubstr("multi-node config"));
  // An application listed with nodes runs only there.
  EXPECT_NE(Get(c, "/test", "T", "pinned", pi1), nullptr);
  EXPECT_EQ(Get(c, "/test", "T", "pinned", pi2), nullptr);
  EXPECT_THAT(why_not_,
              HasSubstr("pinned is not configured to run on node pi2"));
}

TEST_F(GetChannelTest, SingleNodeConfigTakesNoNode) {
  const auto single = Read(
      Write("s.json", R"({ "channels": [ { "name": "/a", "type": "T" } ] })"));
  const auto multi = Read(Write("m.json", R"({ "nodes": [ { "name": "pi1" } ],
      "channels": [ { "name": "/a", "type": "T", "source_node": "pi1" } ] })"));
  EXPECT_FALSE(MultiNode(single.message()));
  EXPECT_EQ(
      Get(single.message(), "/a", "T", "app", GetNode(multi.message(), "pi1")),
      nullptr);
  EXPECT_THAT(why_not_, HasSubstr("has no nodes"));
}

TEST_F(GetChannelTest, ClosestChannelsAreListedBestFirst) {
  const auto config = Read(Write("c.json", R"({ "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage" }, { "name": "/test", "type": "aos.testing.TestReply" },
      { "name": "/aos", "type": "aos.timing.Report" }, { "name": "/camera", "type": "Image" } ] })"));
  const std::string closest = DescribeClosestChannels(
      config.message(), "/tset", "aos.testing.TestMessage");
  EXPECT_EQ(
      closest,
      "closest channels in the config:\n  /test (aos.testing.TestMessage)\n"
      "  /test (aos.testing.TestReply)");
  EXPECT_THAT(DescribeClosestChannels(config.message(), "/zzzzzzzz", "Nothing"),
              HasSubstr("no channel of the config has a similar name"));
}

// The example config, flattened at build time by aos_config.
TEST(AosConfigTest, PingPongConfigIsFlattenedWithSchemas) {
  auto config =
      ReadConfig(aos::testing::ArtifactPath("aos/testing/test_config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  const Configuration& c = config->message();
  EXPECT_EQ(ChannelNames(c),
            "/aos:aos.starter.StarterRpc /aos:aos.starter.Status "
            "/aos:aos.timing.Report /test:aos.testing.TestMessage "
            "/test:aos.testing.TestReply ");
  for (const Channel* channel : *c.channels()) {
    ASSERT_NE(channel->schema(), nullptr) << channel->name()->str();
    EXPECT_EQ(channel->schema()->root_table()->name()->str(),
              channel->type()->str());
  }
  const Channel* reports =
      GetChannel(c, "/aos", "aos.timing.Report", "ping", nullptr);
  ASSERT_NE(reports, nullptr);
  EXPECT_GE(reports->max_size(), 16384);

  auto binary =
      ReadConfig(aos::testing::ArtifactPath("aos/testing/test_config.bfbs"));
  ASSERT_TRUE(binary.ok()) << binary.status().message();
  EXPECT_EQ(ConfigurationToJson(binary->message()), ConfigurationToJson(c));
}

// An application runs on the nodes it lists, or on every node when it
// lists none.
TEST(ApplicationRunsOnTest, TheNodesItListsOrEveryNode) {
  auto config = ReadConfigFromJson(R"({
    "nodes": [{"name": "pi1"}, {"name": "pi2"}],
    "applications": [{"name": "ping", "nodes": ["pi1"]}, {"name": "any"}]
  })");
  ASSERT_TRUE(config.ok()) << config.status();
  const Application* ping = GetApplication(config->message(), "ping");
  const Application* any = GetApplication(config->message(), "any");
  ASSERT_NE(ping, nullptr);
  ASSERT_NE(any, nullptr);
  EXPECT_TRUE(ApplicationRunsOn(*ping, "pi1"));
  EXPECT_FALSE(ApplicationRunsOn(*ping, "pi2"));
  EXPECT_TRUE(ApplicationRunsOn(*any, "pi1"));
  EXPECT_TRUE(ApplicationRunsOn(*any, "pi2"));
}

}  // namespace
}  // namespace aos::configuration
