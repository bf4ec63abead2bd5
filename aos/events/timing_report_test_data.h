#ifndef AOS_EVENTS_TIMING_REPORT_TEST_DATA_H_
#define AOS_EVENTS_TIMING_REPORT_TEST_DATA_H_

// Reports and a config for the tests of the timing report readers (codec,
// accumulator, formatting).

#include <cstdint>
#include <string>
#include <string_view>

#include "aos/configuration.h"
#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/events/path_directory.h"
#include "aos/events/path_origins.h"
#include "aos/events/timing_report_codec.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::testing {

// An aos.timing.Report from JSON.
inline flatbuffers::DetachedBuffer ReportFromJson(std::string_view json) {
  auto buffer = JsonToFlatbuffer(
      json, *reflection::GetSchema(timing::ReportBinarySchema::data()));
  CHECK(buffer.ok()) << buffer.status().message();
  return std::move(buffer).value();
}

// The same, decoded.
inline timing::ReportContents DecodedFromJson(std::string_view json) {
  const flatbuffers::DetachedBuffer buffer = ReportFromJson(json);
  auto decoded = timing::DecodeTimingReport({buffer.data(), buffer.size()});
  CHECK(decoded.ok()) << decoded.status().message();
  return std::move(decoded).value();
}

// /aos, and ping's and pong's channels at indices 1 and 2.
inline FlatbufferDetachedBuffer<Configuration> PingPongChannels() {
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "max_size": 16384 },
      { "name": "/test", "type": "aos.examples.Ping" },
      { "name": "/test", "type": "aos.examples.Pong" } ] })");
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// One window of ping: 100 timer calls, 100 Pongs watched, 100 Pings sent.
// 5397 ns falls in bucket 266 of layout 1, 102438 ns in bucket 402.
// `more_fields` are added to the report's table.
inline std::string PingReport(int64_t start, int64_t end,
                              std::string_view more_fields = "") {
  return StrCat(R"({
  "name": "ping", "pid": 3885755, "version": "ping_version", "node": "",)",
                more_fields, R"(
  "monotonic_start_time": )",
                start, R"(, "monotonic_end_time": )", end, R"(,
  "realtime_start_time": 1740078734089194802,
  "watchers": [ { "channel_index": 2, "count": 100,
    "wakeup_latency": { "average": 3.67391e-05, "min": 5.397e-06, "max": 0.000102438,
                        "standard_deviation": 2.65956e-05 },
    "handler_time": { "average": 7.9988e-07, "min": 1.28e-07, "max": 1.6e-06,
                      "standard_deviation": 3.5626e-07 },
    "wakeup_latency_histogram": { "layout": 1, "min_ns": 5397, "max_ns": 102438,
      "buckets": [ { "index": 266, "count": 50 }, { "index": 402, "count": 50 } ] } } ],
  "senders": [ { "channel_index": 1, "count": 100,
    "size": { "average": 32, "min": 32, "max": 32, "standard_deviation": 0 },
    "error_counts": [ { "error": "MESSAGE_SENT_TOO_FAST", "count": 0 },
                      { "error": "INVALID_REDZONE", "count": 0 } ] } ],
  "timers": [ { "name": "ping", "count": 100, "missed_cycles": 2,
    "wakeup_latency": { "average": 2.66082e-05, "min": 4.693e-06, "max": 0.000100601,
                        "standard_deviation": 2.49382e-05 },
    "handler_time": { "average": 1.15897e-05, "min": 2.809e-06, "max": 2.626e-05,
                      "standard_deviation": 5.1843e-06 } } ] })");
}

inline constexpr int64_t kPingStart = 634527158294370;
inline constexpr int64_t kPingEnd = 634528158294370;

// ping's and pong's reports of one window with paths: ping's timer "ping"
// (origin id PathOriginId("", "ping", "timer", "ping")) sent 100 Pings;
// pong's watcher got each (1 hop, ages of 500 us) and sent a Pong with it;
// ping's watcher got those (2 hops, against a deadline of 2 ms: 50 ages of
// 1 ms, 50 of 3 ms, so 50 overruns).
struct PingPongPathReports {
  uint32_t origin_id;
  timing::ReportContents ping;
  timing::ReportContents pong;
};

inline PingPongPathReports PingPongWithPaths() {
  PingPongPathReports reports;
  reports.origin_id = PathOriginId("", "ping", "timer", "ping");
  reports.ping = DecodedFromJson(PingReport(kPingStart, kPingEnd));
  reports.pong = reports.ping;
  timing::ReportContents& ping = reports.ping;
  timing::ReportContents& pong = reports.pong;
  pong.header.name = "pong";
  pong.header.pid = 3885756;
  pong.timers.clear();
  pong.watchers[0].channel_index = 1;
  pong.senders[0].channel_index = 2;
  ping.timers[0].origin_id = reports.origin_id;
  constexpr int64_t kOriginTime = 1'000'000'000;
  auto carrying = [&](uint16_t hops) {
    PathOrigins origins;
    origins.Add({.id = reports.origin_id,
                 .hops = hops,
                 .monotonic_time_ns = kOriginTime});
    return origins;
  };
  auto at = [](int64_t age_ns) {
    return monotonic_clock::time_point(
        std::chrono::nanoseconds(kOriginTime + age_ns));
  };
  ping.watchers[0].paths.set_deadline(std::chrono::milliseconds(2));
  for (int i = 0; i < 100; ++i) {
    ping.senders[0].sent_origins.Record(carrying(1));
    pong.watchers[0].paths.Record(carrying(1), at(500'000));
    pong.senders[0].sent_origins.Record(carrying(2));
    ping.watchers[0].paths.Record(carrying(2),
                                  at(i % 2 == 0 ? 1'000'000 : 3'000'000));
  }
  return reports;
}

// PingPongWithPaths(), the PingPongChannels() they name channels by, and a
// PathDirectory over those that has learned both reports.
class PingPongPaths {
 public:
  PingPongPaths()
      : channels_(PingPongChannels()),
        reports_(PingPongWithPaths()),
        directory_(&channels_.message()) {
    directory_.Learn(reports_.ping);
    directory_.Learn(reports_.pong);
  }
  PingPongPaths(const PingPongPaths&) = delete;
  PingPongPaths& operator=(const PingPongPaths&) = delete;

  const Configuration& config() const { return channels_.message(); }
  PingPongPathReports& reports() { return reports_; }
  const PathDirectory& directory() const { return directory_; }

 private:
  FlatbufferDetachedBuffer<Configuration> channels_;
  PingPongPathReports reports_;
  PathDirectory directory_;
};

}  // namespace aos::testing

#endif  // AOS_EVENTS_TIMING_REPORT_TEST_DATA_H_
