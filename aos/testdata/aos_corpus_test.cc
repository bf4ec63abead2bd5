// The AOS corpus: configs written like AOS's own test configs (nodes merged
// across imports, logger fields, tags, hostnames, odd max_size, multi-node
// maps) and one config per refusal. Each case is files in aos_corpus/:
//   NAME.json + NAME.expected.json: NAME.json flattens to exactly that.
//   refuse_NAME.json + refuse_NAME.error: reading it fails with exactly that
//     message (paths relative to aos_corpus/).
// Other .json files are imports. Adding a case is adding files; the test
// fails if a case lacks its expectation.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aos/configuration.h"
#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::configuration {
namespace {

namespace fs = std::filesystem;

std::string Contents(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string WithoutTrailingNewline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// Replaces every occurrence of `directory` + "/" in `text` by nothing.
std::string Relative(std::string text, const std::string& directory) {
  const std::string prefix = directory + "/";
  for (size_t at = text.find(prefix); at != std::string::npos;
       at = text.find(prefix, at)) {
    text.erase(at, prefix.size());
  }
  return text;
}

class AosCorpusTest : public ::testing::Test {
 protected:
  const std::string directory_ =
      fs::path(
          aos::testing::ArtifactPath("aos/testdata/aos_corpus/merge_main.json"))
          .parent_path()
          .string();
};

TEST_F(AosCorpusTest, EveryAcceptedConfigFlattensToItsExpectation) {
  int cases = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory_)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".expected.json")) continue;
    const fs::path source =
        entry.path().parent_path() /
        (name.substr(0, name.size() - std::string(".expected.json").size()) +
         ".json");
    SCOPED_TRACE(source.string());
    auto config = ReadConfig(source.string());
    ASSERT_TRUE(config.ok()) << config.status().message();
    EXPECT_EQ(ConfigurationToJson(config->message()),
              WithoutTrailingNewline(Contents(entry.path())));
    ++cases;
  }
  EXPECT_GE(cases, 3);
}

TEST_F(AosCorpusTest, EveryRefusedConfigFailsWithItsMessage) {
  int cases = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory_)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("refuse_") || !name.ends_with(".json")) continue;
    SCOPED_TRACE(name);
    fs::path expected = entry.path();
    expected.replace_extension(".error");
    ASSERT_TRUE(fs::exists(expected)) << "no " << expected << " for " << name;
    auto config = ReadConfig(entry.path().string());
    ASSERT_FALSE(config.ok()) << "accepted:\n"
                              << ConfigurationToJson(config->message());
    EXPECT_EQ(Relative(std::string(config.status().message()), directory_),
              WithoutTrailingNewline(Contents(expected)));
    ++cases;
  }
  EXPECT_GE(cases, 15);
}

}  // namespace
}  // namespace aos::configuration
