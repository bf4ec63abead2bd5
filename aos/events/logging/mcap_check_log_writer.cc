// For mcap_check_test: records a ping/pong run in simulation into
// DIR/{none,lz4,zstd}.mcap, and pi2's side of a two-node run (with remote
// records) into DIR/multinode.mcap, and writes DIR/expected.json and
// DIR/multinode_expected.json: for each MCAP channel (every logged channel,
// with messages or not) its topic, type, and the log and publish times (ns, as
// decimal strings) and the JSON (aos's printer, aos/json_to_flatbuffer.h; not
// for remote records) of every message, in order, as LogFileReader reads them
// back (logger_test and forwarded_log_test check those against what was sent).
// A forwarded channel also has "remote": the remote fields of each message; the
// remote records' channel (type aos.logging.RemoteMessage) has the times of the
// forwarded messages, which its records share. Every channel also has
// "origins": each message's path origins as "ID/HOPS/UNCERTAINTY_US/TIME"
// (decimal), comma-separated, then " dropped N" if N > 0; "" for none. The
// origins records' channel (aos.logging.MessageOrigins) has the times of
// the messages with origins.
#include <fstream>
#include <iostream>
#include <map>

#include "aos/configuration_lookup.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/origins_record.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/events/logging/remote_record.h"
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
  std::vector<std::string> origins;
  // Forwarded channels: each message's remote fields.
  bool forwarded = false;
  std::vector<std::string> monotonic_remote_times;
  std::vector<std::string> realtime_remote_times;
  std::vector<std::string> remote_queue_indexes;
  std::vector<std::string> source_boot_uuids;
};

template <typename Time>
std::string Nanoseconds(Time time) {
  return std::to_string(time.time_since_epoch().count());
}

void AddTimes(const Context& context, ChannelTimes* times) {
  times->log_times.push_back(Nanoseconds(context.monotonic_event_time));
  times->publish_times.push_back(Nanoseconds(context.realtime_event_time));
}

// A message's origins as expected.json gives them (see the top).
std::string OriginsText(const PathOrigins& origins) {
  std::string text;
  for (const PathOrigin& origin : origins) {
    if (!text.empty()) text += ",";
    text += std::to_string(origin.id) + "/" + std::to_string(origin.hops) +
            "/" + std::to_string(origin.uncertainty_us) + "/" +
            std::to_string(origin.monotonic_time_ns);
  }
  if (origins.dropped() > 0) {
    text += " dropped " + std::to_string(origins.dropped());
  }
  return text;
}

void WriteArray(JsonWriter* json, const char* key,
                const std::vector<std::string>& values) {
  json->Key(key).BeginArray();
  for (const std::string& value : values) json->String(value);
  json->EndArray();
}

// What the log at `log_path` holds, as LogFileReader reads it, into
// `json_path`; the program ends if either fails.
void WriteExpected(const std::string& log_path, const std::string& json_path) {
  auto log = LogFileReader::Open(log_path);
  if (!log.ok()) ExitForUserError(std::string(log.status().message()));
  std::map<const Channel*, ChannelTimes> expected;
  ChannelTimes remote_records;
  remote_records.topic = kRemoteMessageTopic;
  remote_records.type = kRemoteMessageType;
  ChannelTimes origins_records;
  origins_records.topic = kOriginsTopic;
  origins_records.type = kOriginsType;
  // Every logged channel has its MCAP channel, even with no message (the
  // starter's, in a run without a starter).
  for (const Channel* channel : (*log)->logged_channels()) {
    ChannelTimes& times = expected[channel];
    times.topic = channel->name()->str();
    times.type = channel->type()->str();
  }
  while (std::optional<LogMessage> message = (*log)->Next()) {
    const Channel* channel = message->channel;
    const Context& context = message->context;
    ChannelTimes& times = expected[channel];
    times.topic = channel->name()->str();
    times.type = channel->type()->str();
    AddTimes(context, &times);
    times.json.push_back(FlatbufferToJson(
        static_cast<const uint8_t*>(context.data), *channel->schema()));
    if (!message->origins_known) {
      ExitForUserError(log_path + ": a message's origins are unknown");
    }
    times.origins.push_back(OriginsText(context.origins));
    if (HasOriginsToRecord(context.origins)) {
      AddTimes(context, &origins_records);
    }
    times.forwarded =
        configuration::ChannelIsForwardedTo(*channel, (*log)->node());
    if (!times.forwarded) continue;
    AddTimes(context, &remote_records);
    times.monotonic_remote_times.push_back(
        Nanoseconds(context.monotonic_remote_time));
    times.realtime_remote_times.push_back(
        Nanoseconds(context.realtime_remote_time));
    times.remote_queue_indexes.push_back(
        std::to_string(context.remote_queue_index));
    times.source_boot_uuids.push_back(context.source_boot_uuid.ToString());
  }
  if (!(*log)->problems().empty()) {
    ExitForUserError((*log)->problems().front());
  }
  JsonWriter json;
  json.BeginArray();
  auto write = [&json](const ChannelTimes& times) {
    json.BeginObject();
    json.Key("topic").String(times.topic);
    json.Key("type").String(times.type);
    WriteArray(&json, "log_times", times.log_times);
    WriteArray(&json, "publish_times", times.publish_times);
    if (!times.json.empty()) WriteArray(&json, "json", times.json);
    if (!times.origins.empty()) WriteArray(&json, "origins", times.origins);
    if (times.forwarded) {
      json.Key("remote").BeginObject();
      WriteArray(&json, "monotonic_remote_times", times.monotonic_remote_times);
      WriteArray(&json, "realtime_remote_times", times.realtime_remote_times);
      WriteArray(&json, "remote_queue_indexes", times.remote_queue_indexes);
      WriteArray(&json, "source_boot_uuids", times.source_boot_uuids);
      json.EndObject();
    }
    json.EndObject();
  };
  for (const auto& [channel, times] : expected) write(times);
  if (!remote_records.log_times.empty()) write(remote_records);
  if (!origins_records.log_times.empty()) write(origins_records);
  json.EndArray();
  std::ofstream out(json_path);
  out << json.Text() << "\n";
  if (!out.good()) ExitForUserError(json_path + ": cannot write it");
}

int Main() {
  if (FLAGS_dir.empty()) ExitForUserError("give --dir=DIR");
  for (Compression compression :
       {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    const std::string name = compression == Compression::kNone
                                 ? std::string("none")
                                 : std::string(CompressionName(compression));
    testing::RecordPingPong(FLAGS_dir + "/" + name + ".mcap", compression,
                            std::chrono::seconds(3));
  }
  // The three runs are identical (simulation is deterministic): take the
  // times from one.
  WriteExpected(FLAGS_dir + "/zstd.mcap", FLAGS_dir + "/expected.json");
  testing::RecordMultiNodePingPong(FLAGS_dir + "/multinode.mcap",
                                   std::chrono::seconds(3));
  WriteExpected(FLAGS_dir + "/multinode.mcap",
                FLAGS_dir + "/multinode_expected.json");
  return 0;
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
