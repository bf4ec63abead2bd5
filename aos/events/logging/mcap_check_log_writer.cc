// For mcap_check_test: records a ping/pong run in simulation into
// DIR/{none,lz4,zstd}.mcap, and writes DIR/expected.json: for each logged
// channel its topic, type, and the log and publish times (ns, as decimal
// strings) and the JSON (aos's printer, aos/json_to_flatbuffer.h) of every
// message, in order, as LogFileReader reads them back (logger_test checks
// those against what was sent).
#include <fstream>
#include <iostream>
#include <map>

#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/init.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/json_writer.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(dir, "", "Directory to write the logs and expected.json into.");

namespace aos::logging {
namespace {

struct ChannelTimes {
  std::string topic;
  std::string type;
  std::vector<std::string> log_times;
  std::vector<std::string> publish_times;
  std::vector<std::string> json;
};

int Main() {
  if (FLAGS_dir.empty()) ExitForUserError("give --dir=DIR");
  std::map<const Channel*, ChannelTimes> expected;
  for (Compression compression :
       {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    const std::string name = compression == Compression::kNone
                                 ? std::string("none")
                                 : std::string(CompressionName(compression));
    const std::string path = FLAGS_dir + "/" + name + ".mcap";
    testing::RecordPingPong(path, compression, std::chrono::seconds(3));
    if (compression != Compression::kZstd) continue;
    // The three runs are identical (simulation is deterministic): take the
    // times from one.
    auto log = LogFileReader::Open(path);
    if (!log.ok()) ExitForUserError(std::string(log.status().message()));
    while (std::optional<LogMessage> message = (*log)->Next()) {
      ChannelTimes& times = expected[message->channel];
      times.topic = message->channel->name()->str();
      times.type = message->channel->type()->str();
      times.log_times.push_back(std::to_string(
          message->context.monotonic_event_time.time_since_epoch().count()));
      times.publish_times.push_back(std::to_string(
          message->context.realtime_event_time.time_since_epoch().count()));
      times.json.push_back(
          FlatbufferToJson(static_cast<const uint8_t*>(message->context.data),
                           *message->channel->schema()));
    }
  }
  JsonWriter json;
  json.BeginArray();
  for (const auto& [channel, times] : expected) {
    json.BeginObject();
    json.Key("topic").String(times.topic);
    json.Key("type").String(times.type);
    for (const auto& [key, values] :
         {std::pair{"log_times", &times.log_times},
          std::pair{"publish_times", &times.publish_times},
          std::pair{"json", &times.json}}) {
      json.Key(key).BeginArray();
      for (const std::string& value : *values) json.String(value);
      json.EndArray();
    }
    json.EndObject();
  }
  json.EndArray();
  std::ofstream out(FLAGS_dir + "/expected.json");
  out << json.Text() << "\n";
  return out.good() ? 0 : 1;
}

}  // namespace
}  // namespace aos::logging

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: mcap_check_log_writer --dir=DIR\n"
                  "Writes ping/pong logs and what they hold, for "
                  "mcap_check_test.");
  return aos::logging::Main();
}
