#include "tools/bench/ipc_pingpong.h"

#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"

namespace aos::bench {

void WritePayloadHeader(const PayloadHeader& header, void* payload) {
  memcpy(payload, &header, sizeof(header));
}

PayloadHeader ReadPayloadHeader(const void* payload) {
  PayloadHeader header;
  memcpy(&header, payload, sizeof(header));
  return header;
}

int64_t MonotonicNowNs() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

void LatencySamples::Add(int64_t latency_ns) {
  histogram_.Record(latency_ns);
  statistic_.Add(static_cast<double>(latency_ns) * 1e-9);
}

Figures LatencySamples::Finish(std::string name) const {
  return FromHistogram(std::move(name), histogram_, statistic_);
}

void ThroughputCounter::Received(int64_t sequence, int64_t now_ns) {
  if (received_ == 0) first_ns_ = now_ns;
  last_ns_ = now_ns;
  ++received_;
  if (sequence > highest_) highest_ = sequence;
}

int64_t ThroughputCounter::lost() const { return highest_ + 1 - received_; }

double ThroughputCounter::seconds() const {
  return static_cast<double>(last_ns_ - first_ns_) * 1e-9;
}

double ThroughputCounter::messages_per_second() const {
  if (received_ < 2 || last_ns_ <= first_ns_) return NAN;
  // Intervals between the first and the last message: received - 1.
  return static_cast<double>(received_ - 1) / seconds();
}

PingPongResult NewResult(std::string_view implementation,
                         const PingPongOptions& options) {
  PingPongResult result;
  result.implementation = std::string(implementation);
  result.role = options.role;
  result.mode = options.mode;
  result.payload_bytes = options.payload_bytes;
  result.priority = options.priority;
  return result;
}

bool PongRecorder::Record(const PayloadHeader& header, int64_t sent_ns,
                          int64_t now_ns) {
  if (options_.mode == PingPongMode::kLatency) {
    wakeups_.Add(now_ns - sent_ns);
    return header.sequence + 1 >= options_.count;
  }
  if (header.sequence == kStopSequence) return true;
  counter_.Received(header.sequence, now_ns);
  return false;
}

PingPongResult PongRecorder::Result(std::string_view implementation,
                                    std::string latency_name) const {
  PingPongResult result = NewResult(implementation, options_);
  if (options_.mode == PingPongMode::kLatency) {
    result.latency = wakeups_.Finish(std::move(latency_name));
  } else {
    result.received = counter_.received();
    result.lost = counter_.lost();
    result.seconds = counter_.seconds();
    result.messages_per_second = counter_.messages_per_second();
  }
  return result;
}

std::string_view RoleName(PingPongRole role) {
  return role == PingPongRole::kPing ? "ping" : "pong";
}

std::string_view ModeName(PingPongMode mode) {
  return mode == PingPongMode::kLatency ? "latency" : "throughput";
}

std::string ResultJson(const PingPongResult& result) {
  JsonWriter json(2);
  json.BeginObject();
  json.Key("implementation").String(result.implementation);
  json.Key("role").String(RoleName(result.role));
  json.Key("mode").String(ModeName(result.mode));
  json.Key("payload_bytes").Number(result.payload_bytes);
  json.Key("priority").Number(result.priority);
  if (result.mode == PingPongMode::kLatency) {
    json.Key("latency");
    WriteFigures(result.latency, &json);
  } else {
    json.Key("received").Number(result.received);
    json.Key("lost").Number(result.lost);
    json.Key("seconds").Number(result.seconds);
    json.Key("messages_per_second").Number(result.messages_per_second);
  }
  json.EndObject();
  return json.Text();
}

void WriteResult(const std::string& path, const PingPongResult& result) {
  if (path.empty()) {
    std::cout << ResultJson(result) << std::endl;
    return;
  }
  FlagOutputFile file("--json", path);
  file.WriteAndClose(ResultJson(result));
}

namespace {

absl::Status NotOneOf(const JsonValue& value, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat(value.source(), ": ", value.path(), " is not ", what));
}

}  // namespace

absl::StatusOr<PingPongResult> ReadResult(const JsonValue& value) {
  PingPongResult result;
  absl::StatusOr<std::string> implementation = value["implementation"].String();
  if (!implementation.ok()) return implementation.status();
  result.implementation = *std::move(implementation);
  absl::StatusOr<std::string> role = value["role"].String();
  if (!role.ok()) return role.status();
  if (*role != "ping" && *role != "pong") {
    return NotOneOf(value["role"], "ping or pong");
  }
  result.role = *role == "ping" ? PingPongRole::kPing : PingPongRole::kPong;
  absl::StatusOr<std::string> mode = value["mode"].String();
  if (!mode.ok()) return mode.status();
  if (*mode != "latency" && *mode != "throughput") {
    return NotOneOf(value["mode"], "latency or throughput");
  }
  result.mode =
      *mode == "latency" ? PingPongMode::kLatency : PingPongMode::kThroughput;
  absl::StatusOr<int64_t> payload = value["payload_bytes"].Integer();
  if (!payload.ok()) return payload.status();
  result.payload_bytes = static_cast<int>(*payload);
  absl::StatusOr<int64_t> priority = value["priority"].Integer();
  if (!priority.ok()) return priority.status();
  result.priority = static_cast<int>(*priority);
  if (result.mode == PingPongMode::kLatency) {
    absl::StatusOr<Figures> latency = ReadFigures(value["latency"]);
    if (!latency.ok()) return latency.status();
    result.latency = *std::move(latency);
    return result;
  }
  double received = 0, lost = 0;
  if (absl::Status s =
          ReadNumbers(value,
                      {{"received", &received},
                       {"lost", &lost},
                       {"seconds", &result.seconds},
                       {"messages_per_second", &result.messages_per_second}},
                      /*null_is_nan=*/true);
      !s.ok()) {
    return s;
  }
  result.received = static_cast<int64_t>(received);
  result.lost = static_cast<int64_t>(lost);
  return result;
}

void MarkReady(const std::string& path) {
  if (path.empty()) return;
  std::ofstream(path) << "ready\n";
}

absl::Status EnterRealtime(int priority) {
  if (priority == 0) return absl::OkStatus();
  struct sched_param param = {};
  param.sched_priority = priority;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    return absl::PermissionDeniedError(StrCat(
        "--priority=", priority, ": SCHED_FIFO refused (", strerror(errno),
        "): run as root or with CAP_SYS_NICE, or "
        "give --priority=0"));
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    return absl::PermissionDeniedError(StrCat(
        "--priority=", priority, ": mlockall refused (", strerror(errno), ")"));
  }
  return absl::OkStatus();
}

}  // namespace aos::bench
