// Writes the seeds of the mcap fuzz target's corpus (docs/fuzzing.md) into
// --dir: small aos logs of one channel of aos.testing.Everything (every kind
// of field) holding a few messages, in chunks of every compression, closed
// (with a summary) and not (scanned), with a configuration of a few hundred
// bytes; one whose configuration embeds the channel's schema (9 KB), so that
// messages are verified and printed as aos_dump does; one with path
// origins records (log_format.h) before its messages: good, one later than
// its message, one that is no flatbuffer; and a plain MCAP file that is no
// aos log. libFuzzer grows
// the corpus from them; `tools/fuzz/fuzz.sh --target=mcap --merge` keeps it
// small.
#include <fstream>
#include <string>

#include "aos/configuration.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/events/logging/origins_record.h"
#include "aos/init.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/testdata/everything_bfbs_generated.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(dir, "", "Directory to write the seeds into.");

namespace aos::fuzz {
namespace {

using logging::Compression;
using logging::McapWriter;

void Check(const absl::Status& status) {
  if (!status.ok()) ExitForUserError(std::string(status.message()));
}

// The configuration: one channel of type aos.testing.Everything, with its
// schema embedded if `schema`.
std::string Config(bool schema) {
  const std::string bfbs = FLAGS_dir + "/everything.bfbs.tmp";
  const std::string json = FLAGS_dir + "/config.json.tmp";
  std::ofstream(bfbs, std::ios::binary)
      .write(reinterpret_cast<const char*>(
                 aos::testing::EverythingBinarySchema::data()),
             aos::testing::EverythingBinarySchema::size());
  std::ofstream(json) << R"({ "channels": [ { "name": "/e", )"
                      << R"("type": "aos.testing.Everything", )"
                      << R"("max_size": 400 } ] })";
  auto config = configuration::ReadConfig(
      json, {.schema_paths = {bfbs}, .embed_schemas = schema});
  std::remove(bfbs.c_str());
  std::remove(json.c_str());
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  return std::string(reinterpret_cast<const char*>(config->span().data()),
                     config->span().size());
}

std::string Message(std::string_view json) {
  const reflection::Schema* schema =
      reflection::GetSchema(aos::testing::EverythingBinarySchema::data());
  auto message = JsonToFlatbuffer(json, *schema);
  if (!message.ok()) ExitForUserError(std::string(message.status().message()));
  return std::string(reinterpret_cast<const char*>(message->data()),
                     message->size());
}

// The origins record of message `sequence` (sent at `log_time`):
// `kind` 0 good, 1 an origin later than the message (by more than its
// uncertainty), 2 not a flatbuffer.
std::string OriginsRecord(int kind, uint32_t sequence, int64_t log_time) {
  if (kind == 2) return "no flatbuffer";
  PathOrigins origins;
  origins.Add(
      {.id = 0x6b2f3a10,
       .hops = 2,
       .uncertainty_us = 7,
       .monotonic_time_ns = kind == 0 ? log_time - 10 : log_time + 1000000});
  origins.Add({.id = 5, .hops = 1, .monotonic_time_ns = log_time});
  flatbuffers::FlatBufferBuilder fbb;
  return std::string(logging::EncodeOriginsRecord(0, sequence, origins, &fbb));
}

// An aos log of the Everything channel with a few messages; with
// `origins`, each message has an origins record before it.
void WriteLog(const std::string& name, Compression compression, bool close,
              const std::string& config, bool origins = false) {
  auto writer = McapWriter::Create(
      FLAGS_dir + "/" + name, {.compression = compression, .chunk_size = 300});
  Check(writer.status());
  auto schema = (*writer)->AddSchema("aos.testing.Everything",
                                     logging::kFlatbufferEncoding, "");
  Check(schema.status());
  Check((*writer)
            ->AddChannel(*schema, "/e", logging::kFlatbufferEncoding,
                         {{std::string(logging::kChannelType),
                           "aos.testing.Everything"}})
            .status());
  Check((*writer)->AddAttachment(logging::kConfigAttachment,
                                 logging::kConfigMediaType, config, 0, 0));
  Check((*writer)->AddMetadata(logging::kLoggerMetadata,
                               {{std::string(logging::kLoggerNode), ""},
                                {std::string(logging::kLoggerBootUuid),
                                 "4a1e1c4e-3a6c-4f7e-9c3b-2d7f0e8a5b61"}}));
  const std::string messages[] = {
      Message(R"({ "i32": 7, "text": "a", "color": "Blue" })"),
      Message(R"({ "ints": [ 1, 2 ], "leaf": { "name": "l", "weight": 1.5 },
                   "point": { "x": 1, "y": 2, "tag": 3 } })"),
      Message(R"({ "thing_type": "Other", "thing": { "note": "n" },
                   "strings": [ "s" ], "features": "Fast Loud",
                   "f32": nan })"),
  };
  uint16_t records = 0;
  if (origins) {
    auto origins_schema = (*writer)->AddSchema(logging::kOriginsType,
                                               logging::kFlatbufferEncoding,
                                               logging::MessageOriginsSchema());
    Check(origins_schema.status());
    auto channel =
        (*writer)->AddChannel(*origins_schema, logging::kOriginsTopic,
                              logging::kFlatbufferEncoding, {});
    Check(channel.status());
    records = *channel;
  }
  uint32_t sequence = 0;
  for (const std::string& message : messages) {
    const int64_t log_time = 1000 * (sequence + 1);
    if (origins) {
      Check(
          (*writer)->WriteMessage(records, sequence, log_time, log_time * 2,
                                  OriginsRecord(sequence, sequence, log_time)));
    }
    Check((*writer)->WriteMessage(0, sequence, log_time, 2000 * (sequence + 1),
                                  message));
    ++sequence;
  }
  if (close) {
    Check((*writer)->Close());
  } else {
    Check((*writer)->Flush());
    writer->release();  // As a killed logger leaves it.
  }
}

int Main() {
  if (FLAGS_dir.empty()) ExitForUserError("give --dir=DIR");
  const std::string config = Config(false);
  WriteLog("zstd.mcap", Compression::kZstd, true, config);
  WriteLog("lz4.mcap", Compression::kLz4, true, config);
  WriteLog("none.mcap", Compression::kNone, true, config);
  WriteLog("unfinished.mcap", Compression::kZstd, false, config);
  WriteLog("schema.mcap", Compression::kZstd, true, Config(true));
  WriteLog("origins.mcap", Compression::kNone, true, config, true);
  // A plain MCAP file (no configuration): McapReader alone reads it.
  auto writer = McapWriter::Create(FLAGS_dir + "/plain.mcap",
                                   {.compression = Compression::kLz4});
  Check(writer.status());
  Check((*writer)->AddChannel(0, "/p", "raw", {}).status());
  Check((*writer)->AddAttachment("a", "text/plain", "attached", 1, 2));
  Check((*writer)->WriteMessage(0, 0, 5, 6, "message"));
  Check((*writer)->Close());
  return 0;
}

}  // namespace
}  // namespace aos::fuzz

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: mcap_seed_writer --dir=DIR\n"
                  "Writes the seeds of the mcap fuzz target's corpus.");
  return aos::fuzz::Main();
}
