// logger_bench: what aos_logger costs the applications it records, and how
// fast it records (docs/benchmarks.md, "Logging").
//
// 1. Latency: ping (1 kHz, SCHED_FIFO 5) and pong, with and without
//    aos_logger recording all their channels, in alternating rounds in the
//    same run (A/B/A/B...). Ping's timer wakeup latency comes from its own
//    timing reports; the first report of each round is dropped (start-up).
//    Prints avg/p50/p99/max per arm and the ratio with/without.
// 2. Throughput: this process sends 1 KiB messages on one channel, paced at
//    --rate_mb_s and then as fast as it can, while aos_logger records them
//    to /dev/shm with each compression; the log then says how many it
//    recorded and how many it missed. MB/s are 10^6 bytes of message data
//    per second of send time, and the CPU time aos_logger used (/proc),
//    per message recorded. With --origins=N each message carries N path
//    origins (RawSender::SetOrigins), which the logger records beside it.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_report_codec.h"
#include "aos/init.h"
#include "aos/starter/launcher.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(bin_dir, "bazel-bin",
              "Where ping, pong and aos_logger were built.");
DEFINE_int32(rounds, 6, "Latency: rounds of each arm.");
DEFINE_int32(seconds, 10, "Latency: seconds per round.");
DEFINE_double(rate_mb_s, 250, "Throughput: the paced send rate, MB/s.");
DEFINE_int32(messages, 400000, "Throughput: 1 KiB messages per run.");
DEFINE_string(compressions, "none,lz4,zstd",
              "Throughput: the compressions to run, in this order.");
DEFINE_bool(latency, true, "Run the latency part.");
DEFINE_int32(poll_period_ms, -1,
             "Give aos_logger this --poll_period_ms (-1: its default).");
DEFINE_bool(throughput, true, "Run the throughput part.");
DEFINE_int32(origins, 0,
             "Throughput: path origins each message carries, 0 to 4 (the "
             "logger records them beside the message).");

namespace aos::bench {
namespace {

// `args` and --poll_period_ms, if given.
std::vector<std::string> LoggerArgs(std::vector<std::string> args) {
  if (FLAGS_poll_period_ms >= 0) {
    args.push_back(StrCat("--poll_period_ms=", FLAGS_poll_period_ms));
  }
  return args;
}

std::string MakeShmBase() {
  char base[] = "/dev/shm/aos_logger_bench.XXXXXX";
  if (mkdtemp(base) == nullptr) ExitForUserError("cannot create /dev/shm dir");
  return base;
}

void RemoveTree(const std::string& path) {
  Subprocess rm("/bin/rm", {"-rf", path}, "/tmp");
  rm.Wait();
}

// Ping's "ping" timer over one round, from its timing reports.
timing::TimerTiming PingRound(bool with_logger, const std::string& out_dir) {
  const std::string base = MakeShmBase();
  const std::string config = FLAGS_bin_dir + "/examples/pingpong_config.json";
  const std::string log_file = base + ".mcap";
  std::vector<std::unique_ptr<Subprocess>> processes;
  if (with_logger) {
    processes.push_back(std::make_unique<Subprocess>(
        FLAGS_bin_dir + "/aos/events/logging/aos_logger",
        LoggerArgs({"--config=" + config, "--shm_base=" + base,
                    "--log_file=" + log_file}),
        out_dir));
  }
  processes.push_back(std::make_unique<Subprocess>(
      FLAGS_bin_dir + "/examples/pong",
      std::vector<std::string>{"--config=" + config, "--shm_base=" + base},
      out_dir));
  processes.push_back(std::make_unique<Subprocess>(
      FLAGS_bin_dir + "/examples/ping",
      std::vector<std::string>{"--config=" + config, "--shm_base=" + base,
                               "--sleep_ms=1"},
      out_dir));

  auto read = configuration::ReadConfig(config);
  if (!read.ok()) ExitForUserError(std::string(read.status().message()));
  FLAGS_shm_base = base;
  timing::TimerTiming total;
  {
    ShmEventLoop observer(&read->message(), "logger_bench");
    observer.SkipTimingReport();
    int reports = 0;
    observer.MakeRawWatcher(
        observer.GetChannel<timing::Report>("/aos"),
        [&](const Context& context, const void*) {
          auto report = timing::DecodeTimingReport(std::span<const uint8_t>(
              static_cast<const uint8_t*>(context.data), context.size));
          if (!report.ok() || report->header.name != "ping") return;
          if (reports++ == 0) return;  // Start-up.
          for (const timing::TimerTiming& timer : report->timers) {
            if (timer.name == "ping") total.Merge(timer);
          }
        });
    TimerHandler* stop = observer.AddTimer([&]() { observer.Exit(); });
    observer.OnRun([&]() {
      stop->Schedule(observer.monotonic_now() +
                     std::chrono::seconds(FLAGS_seconds + 1));
    });
    observer.Run();
  }
  for (auto it = processes.rbegin(); it != processes.rend(); ++it) {
    (*it)->Terminate();
  }
  processes.clear();
  RemoveTree(base);
  unlink(log_file.c_str());
  return total;
}

void PrintLatency(std::string_view arm, const timing::TimerTiming& timer) {
  const auto& latency = timer.wakeup_latency;
  std::printf("  %-16s %8lu  %7.1f  %7.1f  %7.1f  %8.1f\n",
              std::string(arm).c_str(), static_cast<unsigned long>(timer.count),
              latency.statistic().average() * 1e6,
              latency.histogram().PercentileNs(50) / 1e3,
              latency.histogram().PercentileNs(99) / 1e3,
              latency.statistic().max() * 1e6);
}

void Latency(const std::string& out_dir) {
  timing::TimerTiming without;
  timing::TimerTiming with;
  for (int round = 0; round < FLAGS_rounds; ++round) {
    without.Merge(PingRound(false, out_dir));
    with.Merge(PingRound(true, out_dir));
  }
  std::printf(
      "ping's timer at 1 kHz, wakeup latency (us), %d rounds of %d s each:\n"
      "  %-16s %8s  %7s  %7s  %7s  %8s\n",
      FLAGS_rounds, FLAGS_seconds, "arm", "calls", "avg", "p50", "p99", "max");
  PrintLatency("without logger", without);
  PrintLatency("with aos_logger", with);
  std::printf(
      "  ratio with/without: avg %.3f, p50 %.3f, p99 %.3f\n",
      with.wakeup_latency.statistic().average() /
          without.wakeup_latency.statistic().average(),
      static_cast<double>(with.wakeup_latency.histogram().PercentileNs(50)) /
          without.wakeup_latency.histogram().PercentileNs(50),
      static_cast<double>(with.wakeup_latency.histogram().PercentileNs(99)) /
          without.wakeup_latency.histogram().PercentileNs(99));
}

// One throughput run: `messages` of 1 KiB sent at `rate_mb_s` (0: as fast
// as possible) while aos_logger records them with `compression`.
void ThroughputRun(const std::string& compression, double rate_mb_s,
                   const std::string& out_dir) {
  constexpr size_t kSize = 1024;
  const std::string base = MakeShmBase();
  // Beside the shm directory, not through it: it is removed first.
  const std::string config_path = base + ".json";
  {
    // 50 ms of storage at up to 1 M messages/s: a logger 50 ms behind
    // starts missing messages.
    std::ofstream config(config_path);
    config << R"({"channels": [
      {"name": "/aos", "type": "aos.timing.Report", "frequency": 50,
       "num_senders": 20, "max_size": 16384},
      {"name": "/bench", "type": "aos.bench.Blob", "frequency": 1000000,
       "max_size": 1024, "channel_storage_duration": 50000000}]})";
  }
  const std::string log_file = base + ".mcap";
  auto read = configuration::ReadConfig(config_path);
  if (!read.ok()) ExitForUserError(std::string(read.status().message()));
  FLAGS_shm_base = base;
  ShmEventLoop sender_loop(&read->message(), "bench_sender");
  sender_loop.SkipTimingReport();
  std::unique_ptr<RawSender> sender = sender_loop.MakeRawSender(
      configuration::GetChannel(read->message(), "/bench", "aos.bench.Blob",
                                "bench_sender", nullptr));
  // The logger records from its first timing report on: the first message
  // is sent after it.
  starter::Launcher launcher(&sender_loop, out_dir);
  absl::Status up = launcher.Start(
      {.name = "aos_logger",
       .binary = FLAGS_bin_dir + "/aos/events/logging/aos_logger",
       .args = LoggerArgs({"--config=" + config_path, "--shm_base=" + base,
                           "--log_file=" + log_file,
                           "--compression=" + compression}),
       .network_namespace = "",
       .reports = true});
  if (up.ok()) up = launcher.WaitUntilReporting(std::chrono::seconds(30));
  if (!up.ok()) ExitForUserError(std::string(up.message()));
  // Incompressible payload (xorshift), different in every message: the
  // worst case for the compressors.
  std::vector<uint64_t> payload(kSize / 8);
  uint64_t state = 88172645463325252ull;
  // Origins as a timer's message passes them on: scheduled before the send.
  PathOrigins origins;
  const int64_t origin_time =
      sender_loop.monotonic_now().time_since_epoch().count();
  for (int i = 0; i < FLAGS_origins; ++i) {
    origins.Add({.id = static_cast<uint32_t>(i + 1),
                 .hops = 1,
                 .monotonic_time_ns = origin_time - i});
  }
  int send_errors = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < FLAGS_messages; ++i) {
    for (uint64_t& word : payload) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      word = state;
    }
    payload[0] = i;
    if (rate_mb_s > 0) {
      const auto due =
          start +
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::duration<double>(i * kSize / (rate_mb_s * 1e6)));
      while (std::chrono::steady_clock::now() < due) {
      }
    }
    if (FLAGS_origins > 0) sender->SetOrigins(origins);
    // Unpaced, the sender may outrun the channel's frequency limit: those
    // messages were never sent, and do not count.
    if (sender->Send(payload.data(), kSize) != RawSender::Error::kOk) {
      ++send_errors;
    }
  }
  const double send_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // Let it catch up, then stop it cleanly.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double logger_cpu = CpuSecondsOf(launcher.Pid("aos_logger"));
  // Time to finish its file: a killed logger would leave it cut short.
  launcher.StopAll(std::chrono::seconds(60));

  auto log = logging::LogFileReader::Open(log_file);
  if (!log.ok()) ExitForUserError(std::string(log.status().message()));
  uint64_t recorded = 0;
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    if (message->channel->name()->string_view() == "/bench") ++recorded;
  }
  uint64_t lost = 0;
  for (const auto& [channel, count] : (*log)->lost_messages()) lost += count;
  struct stat info;
  stat(log_file.c_str(), &info);
  const uint64_t sent = FLAGS_messages - send_errors;
  const double sent_mb_s = sent * kSize / send_seconds / 1e6;
  // Recorded MB/s: what the log holds per second of send time (equal to
  // the sent rate when nothing was missed).
  std::printf(
      "  %-5s %-12s sent %7.1f MB/s; recorded %7lu, missed %7lu "
      "(%5.1f%%); recorded %7.1f MB/s; file %6.1f MB; logger CPU %5.2f s "
      "(%4.2f us/message)\n",
      compression.c_str(),
      rate_mb_s > 0 ? StrCat("paced ", rate_mb_s).c_str() : "unpaced",
      sent_mb_s, static_cast<unsigned long>(recorded),
      static_cast<unsigned long>(lost), 100.0 * lost / sent,
      recorded * kSize / send_seconds / 1e6, info.st_size / 1e6, logger_cpu,
      recorded > 0 ? logger_cpu * 1e6 / recorded : 0.0);
  RemoveTree(base);
  unlink(log_file.c_str());
  unlink(config_path.c_str());
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(list);
  while (std::getline(in, part, ',')) parts.push_back(part);
  return parts;
}

// Ends the bench, before anything runs, on a flag out of range.
void CheckFlags() {
  ExitOnFlagError(CheckAtLeast("--rounds", FLAGS_rounds, 1));
  ExitOnFlagError(CheckAtLeast("--seconds", FLAGS_seconds, 1));
  if (!(FLAGS_rate_mb_s > 0) || std::isinf(FLAGS_rate_mb_s)) {
    ExitOnFlagError(FlagError("--rate_mb_s", FLAGS_rate_mb_s,
                              " is not a rate: give more than 0"));
  }
  ExitOnFlagError(CheckAtLeast("--messages", FLAGS_messages, 1));
  ExitOnFlagError(CheckAtLeast("--poll_period_ms", FLAGS_poll_period_ms, -1,
                               " is not a period: give 0 or more (-1: "
                               "aos_logger's default)"));
  ExitOnFlagError(CheckInRange("--origins", FLAGS_origins, 0,
                               static_cast<int>(kMaxPathOrigins),
                               StrCat(": give 0 to ", kMaxPathOrigins)));
}

void Throughput(const std::string& out_dir) {
  std::printf(
      "aos_logger throughput, %d messages of 1 KiB with %d origins each to "
      "/dev/shm:\n",
      FLAGS_messages, FLAGS_origins);
  for (const std::string& compression : SplitCommas(FLAGS_compressions)) {
    ThroughputRun(compression, FLAGS_rate_mb_s, out_dir);
    ThroughputRun(compression, 0, out_dir);
  }
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: logger_bench [--bin_dir=bazel-bin] [--rounds=6]\n"
                  "    [--seconds=10] [--rate_mb_s=250] [--messages=400000]\n"
                  "    [--origins=0]\n"
                  "What aos_logger costs ping's timer, and how fast it\n"
                  "records 1 KiB messages. Run tools/bench/logging/"
                  "logger_bench.sh. docs/benchmarks.md.");
  aos::RefuseArguments(argc, argv);
  aos::bench::CheckFlags();
  char out_dir[] = "/tmp/aos_logger_bench.XXXXXX";
  if (mkdtemp(out_dir) == nullptr) aos::ExitForUserError("cannot mkdtemp");
  if (FLAGS_throughput) aos::bench::Throughput(out_dir);
  if (FLAGS_latency) aos::bench::Latency(out_dir);
  return 0;
}
