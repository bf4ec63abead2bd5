// Our shared-memory channels beside iceoryx 2.0's, in the same run: the
// driver behind tools/bench/ipc.sh (which builds, starts iox-roudi, and
// holds the build lock while this measures).
//
//   ipc_bench --work_dir=/dev/shm/aos_ipc_bench.X [--priority=80]
//             [--rate_hz=1000] [--count=5000] [--throughput_seconds=2]
//             [--runs=4] [--payloads=32,1024] [--json=FILE]
//
// For each run (A B B A ...: aos, iceoryx, iceoryx, aos) and each payload,
// it runs one ping/pong pair of the run's arm (aos_pingpong or
// iceoryx_pingpong, tools/bench/ipc_pingpong.h) in latency mode (--count
// messages at --rate_hz) and then in throughput mode (ping floods for
// --throughput_seconds), both processes at SCHED_FIFO --priority. It
// prints the machine, the wakeup latency p50/p99 of each side with their
// ratios, messages/s with their ratio, each run's figures in order (the
// spread on a shared machine), and issue 27's goals met or MISSED; --json
// writes all of it. Needs a running iox-roudi for the iceoryx arm.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_document.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/bench/bench_figures.h"
#include "tools/bench/bench_harness.h"
#include "tools/bench/ipc_pingpong.h"

DEFINE_string(bin_dir, "bazel-bin", "Where the built programs are.");
DEFINE_string(work_dir, "",
              "A scratch directory (results, our channels' shared memory); "
              "must exist.");
DEFINE_int32(priority, 80,
             "SCHED_FIFO priority of every ping and pong (0 = normal).");
DEFINE_int32(rate_hz, 1000, "Latency runs: messages per second.");
DEFINE_int32(count, 5000, "Latency runs: messages per run.");
DEFINE_double(throughput_seconds, 2.0, "Throughput runs: seconds of flood.");
DEFINE_int32(runs, 4,
             "Runs, alternating aos and iceoryx as A B B A A B B A ...; even.");
DEFINE_string(payloads, "32,1024", "Payload sizes in bytes, comma-separated.");
DEFINE_string(json, "", "Also write every figure to this file as JSON.");

namespace aos::bench {
namespace {

// Issue 27's goals: our wakeup p50 at most this many times iceoryx's, and
// our messages/s at least this many times iceoryx's.
constexpr double kWakeupGoal = 1.1;
constexpr double kThroughputGoal = 1.0;

enum Arm { kAos = 0, kIceoryx = 1 };
constexpr const char* kArmNames[] = {"aos", "iceoryx"};
constexpr const char* kArmPrograms[] = {"tools/bench/aos_pingpong",
                                        "tools/bench/iceoryx_pingpong"};

// One arm's figures at one payload, over all its runs.
struct ArmFigures {
  std::vector<Figures> wakeups, round_trips;
  int64_t received = 0, lost = 0;
  double seconds = 0;
  std::vector<double> run_p50_us, run_messages_per_second;

  double messages_per_second() const {
    return seconds > 0 ? static_cast<double>(received) / seconds : NAN;
  }
};

struct PayloadFigures {
  int payload_bytes = 0;
  ArmFigures arms[2];
  // Arms in the order they ran, for the per-run line.
  std::vector<Arm> order;
};

absl::StatusOr<std::vector<int>> ParsePayloads(const std::string& text) {
  std::vector<int> payloads;
  for (const std::string& piece :
       std::vector<std::string>(absl::StrSplit(text, ','))) {
    char* end = nullptr;
    const long value = strtol(piece.c_str(), &end, 10);
    if (piece.empty() || *end != '\0' || value < kMinPayloadBytes ||
        value > kMaxPayloadBytes) {
      return FlagError(
          "--payloads", text,
          StrCat(": '", piece, "' is not a size of ", kMinPayloadBytes, "-",
                 kMaxPayloadBytes, " bytes"));
    }
    payloads.push_back(static_cast<int>(value));
  }
  return payloads;
}

class Bench {
 public:
  Bench(std::vector<int> payloads) : programs_(FLAGS_bin_dir, FLAGS_work_dir) {
    for (int bytes : payloads) {
      PayloadFigures p;
      p.payload_bytes = bytes;
      figures_.push_back(std::move(p));
    }
  }

  void Run() {
    for (int run = 0; run < FLAGS_runs; ++run) {
      const Arm arm = AbbaSecondArm(run) ? kIceoryx : kAos;
      for (PayloadFigures& p : figures_) {
        p.order.push_back(arm);
        ArmFigures& a = p.arms[arm];
        const Pair latency =
            RunPair(arm, PingPongMode::kLatency, p.payload_bytes);
        a.wakeups.push_back(latency.pong.latency);
        a.round_trips.push_back(latency.ping.latency);
        a.run_p50_us.push_back(latency.pong.latency.p50_us);
        const Pair flood =
            RunPair(arm, PingPongMode::kThroughput, p.payload_bytes);
        a.received += flood.pong.received;
        a.lost += flood.pong.lost;
        a.seconds += flood.pong.seconds;
        a.run_messages_per_second.push_back(flood.pong.messages_per_second);
      }
    }
  }

  const std::vector<PayloadFigures>& figures() const { return figures_; }

 private:
  struct Pair {
    PingPongResult ping, pong;
  };

  Pair RunPair(Arm arm, PingPongMode mode, int payload_bytes) {
    const std::string dir = StrCat(FLAGS_work_dir, "/pair", pairs_++);
    PCHECK(mkdir(dir.c_str(), 0700) == 0) << dir;
    std::vector<std::string> common = {
        StrCat("--mode=", ModeName(mode)),
        StrCat("--payload_bytes=", payload_bytes),
        StrCat("--priority=", FLAGS_priority),
        StrCat("--rate_hz=", FLAGS_rate_hz),
        StrCat("--count=", FLAGS_count),
        StrCat("--seconds=", FLAGS_throughput_seconds)};
    if (arm == kAos) {
      // Our loops would hold /dev/cpu_dma_latency at 0 at SCHED_FIFO; iceoryx
      // holds nothing, so neither does (docs/benchmarks.md).
      common.push_back(StrCat("--shm_base=", dir, "/shm"));
      common.push_back("--cpu_dma_latency_us=-1");
    }
    const std::string ready = dir + "/ready";
    std::vector<std::string> pong_args = common;
    pong_args.push_back("--role=pong");
    pong_args.push_back(StrCat("--json=", dir, "/pong.json"));
    pong_args.push_back("--ready_file=" + ready);
    std::unique_ptr<Subprocess> pong =
        programs_.Start(kArmPrograms[arm], pong_args);
    WaitForReady(ready, *pong, arm);
    std::vector<std::string> ping_args = common;
    ping_args.push_back("--role=ping");
    ping_args.push_back(StrCat("--json=", dir, "/ping.json"));
    std::unique_ptr<Subprocess> ping =
        programs_.Start(kArmPrograms[arm], ping_args);
    ExitUnlessSucceeded(*ping, StrCat(kArmNames[arm], " ping"));
    ExitUnlessSucceeded(*pong, StrCat(kArmNames[arm], " pong"));
    Pair pair;
    pair.pong = Read(dir + "/pong.json");
    if (mode == PingPongMode::kLatency) pair.ping = Read(dir + "/ping.json");
    return pair;
  }

  // Until pong made `ready` (it then waits for messages); a pong that does
  // not get there in 30 s (no iox-roudi, say) ends the bench.
  static void WaitForReady(const std::string& ready, Subprocess& pong,
                           Arm arm) {
    for (int i = 0; i < 30000; ++i) {
      if (access(ready.c_str(), F_OK) == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pong.Terminate();
    FailWithOutput(StrCat(kArmNames[arm],
                          " pong was not ready after 30 s (for iceoryx: is "
                          "iox-roudi running? tools/bench/ipc.sh starts it)"),
                   &pong);
  }

  static PingPongResult Read(const std::string& path) {
    absl::StatusOr<JsonDocument> doc = JsonDocument::ReadFile(path);
    if (!doc.ok()) FailWithOutput(StrCat(doc.status().message()), nullptr);
    absl::StatusOr<PingPongResult> result = ReadResult(doc->root());
    if (!result.ok()) {
      FailWithOutput(StrCat(result.status().message()), nullptr);
    }
    return *std::move(result);
  }

  BenchPrograms programs_;
  std::vector<PayloadFigures> figures_;
  int pairs_ = 0;
};

std::string PayloadName(int bytes) {
  return bytes % 1024 == 0 ? StrCat(bytes / 1024, " KiB") : StrCat(bytes, " B");
}

std::string MachineLine(const MachineInfo& m) {
  auto said = [](const std::string& s) { return s.empty() ? "unknown" : s; };
  return StrCat(said(m.cpu_model), ", ", m.online_cpus, " CPUs, kernel ",
                said(m.kernel), ", clocksource ", said(m.clocksource),
                ", cpuidle driver ",
                m.cpuidle_driver.empty() ? "none" : m.cpuidle_driver,
                " (governor ", said(m.cpuidle_governor), ")");
}

struct Verdicts {
  bool wakeup_met = true;
  bool throughput_met = true;
};

// One arm's wakeups (or round trips), all runs pooled.
Figures Pooled(const ArmFigures& a, bool wakeup) {
  return Merge(wakeup ? "wakeup" : "round trip",
               wakeup ? a.wakeups : a.round_trips);
}

Verdicts Print(const MachineInfo& machine,
               const std::vector<PayloadFigures>& figures) {
  std::cout << "Machine: " << MachineLine(machine) << "\n"
            << "With the cpuidle driver 'none' an idle vCPU halts: a wakeup "
               "that crosses CPUs pays the host's wakeup of the vCPU.\n\n"
            << "aos ShmEventLoop vs iceoryx 2.0 (WaitSet), one ping/pong "
               "process pair each, SCHED_FIFO "
            << FLAGS_priority << ", " << FLAGS_runs
            << " runs alternating A B B A; latency: " << FLAGS_count
            << " messages at " << FLAGS_rate_hz
            << " Hz per run; throughput: " << FLAGS_throughput_seconds
            << " s of flood per run\n\n";
  Verdicts v;
  for (const bool wakeup : {true, false}) {
    printf("%-22s %8s %8s %10s %8s %10s %10s\n",
           wakeup ? "Wakeup latency (us)" : "Round trip (us)", "aos p50", "p99",
           "iceoryx p50", "p99", "p50 ratio", "p99 ratio");
    for (const PayloadFigures& p : figures) {
      const Figures aos = Pooled(p.arms[kAos], wakeup);
      const Figures iox = Pooled(p.arms[kIceoryx], wakeup);
      printf("  %-20s %8s %8s %10s %8s %10s %10s\n",
             PayloadName(p.payload_bytes).c_str(),
             ThreeDigits(aos.p50_us).c_str(), ThreeDigits(aos.p99_us).c_str(),
             ThreeDigits(iox.p50_us).c_str(), ThreeDigits(iox.p99_us).c_str(),
             RatioText(aos.p50_us, iox.p50_us).c_str(),
             RatioText(aos.p99_us, iox.p99_us).c_str());
      if (wakeup && !(SafeRatio(aos.p50_us, iox.p50_us) <= kWakeupGoal)) {
        v.wakeup_met = false;
      }
    }
  }
  printf("%-22s %12s %10s %12s %10s %8s\n", "Messages/s (flood)", "aos",
         "aos lost", "iceoryx", "iox lost", "ratio");
  for (const PayloadFigures& p : figures) {
    const ArmFigures& aos = p.arms[kAos];
    const ArmFigures& iox = p.arms[kIceoryx];
    printf("  %-20s %12.0f %10lld %12.0f %10lld %8s\n",
           PayloadName(p.payload_bytes).c_str(), aos.messages_per_second(),
           static_cast<long long>(aos.lost), iox.messages_per_second(),
           static_cast<long long>(iox.lost),
           RatioText(aos.messages_per_second(), iox.messages_per_second())
               .c_str());
    if (!(SafeRatio(aos.messages_per_second(), iox.messages_per_second()) >=
          kThroughputGoal)) {
      v.throughput_met = false;
    }
  }
  std::cout << "\nEach run in order (wakeup p50 us / messages/s):\n";
  for (const PayloadFigures& p : figures) {
    std::cout << "  " << PayloadName(p.payload_bytes) << ":";
    size_t next[2] = {0, 0};
    for (Arm arm : p.order) {
      const ArmFigures& a = p.arms[arm];
      const size_t i = next[arm]++;
      std::cout << " " << kArmNames[arm] << " " << ThreeDigits(a.run_p50_us[i])
                << "/" << Fixed(a.run_messages_per_second[i], 0);
    }
    std::cout << "\n";
  }
  std::cout << "\nGoals (issue 27): wakeup p50 <= " << kWakeupGoal
            << "x iceoryx's at every payload: "
            << (v.wakeup_met ? "met" : "MISSED")
            << "; messages/s >= " << kThroughputGoal
            << "x iceoryx's at every payload: "
            << (v.throughput_met ? "met" : "MISSED") << "\n";
  return v;
}

void WriteArm(const ArmFigures& a, JsonWriter* json) {
  json->BeginObject();
  json->Key("wakeup");
  WriteFigures(Pooled(a, true), json);
  json->Key("round_trip");
  WriteFigures(Pooled(a, false), json);
  json->Key("messages_per_second").Number(a.messages_per_second());
  json->Key("received").Number(a.received);
  json->Key("lost").Number(a.lost);
  json->Key("flood_seconds").Number(a.seconds);
  json->Key("run_wakeup_p50_us").BeginArray();
  for (double x : a.run_p50_us) json->Number(x);
  json->EndArray();
  json->Key("run_messages_per_second").BeginArray();
  for (double x : a.run_messages_per_second) json->Number(x);
  json->EndArray();
  json->EndObject();
}

std::string Json(const MachineInfo& machine,
                 const std::vector<PayloadFigures>& figures,
                 const Verdicts& v) {
  JsonWriter json(2);
  json.BeginObject();
  json.Key("machine").String(MachineLine(machine));
  json.Key("cpuidle_driver").String(machine.cpuidle_driver);
  json.Key("priority").Number(FLAGS_priority);
  json.Key("rate_hz").Number(FLAGS_rate_hz);
  json.Key("count").Number(FLAGS_count);
  json.Key("throughput_seconds").Number(FLAGS_throughput_seconds);
  json.Key("runs").Number(FLAGS_runs);
  json.Key("queue_depth").Number(kThroughputQueueDepth);
  json.Key("payloads").BeginArray();
  for (const PayloadFigures& p : figures) {
    json.BeginObject();
    json.Key("payload_bytes").Number(p.payload_bytes);
    json.Key("aos");
    WriteArm(p.arms[kAos], &json);
    json.Key("iceoryx");
    WriteArm(p.arms[kIceoryx], &json);
    const Figures aos = Pooled(p.arms[kAos], true);
    const Figures iox = Pooled(p.arms[kIceoryx], true);
    json.Key("wakeup_p50_ratio").Number(SafeRatio(aos.p50_us, iox.p50_us));
    json.Key("wakeup_p99_ratio").Number(SafeRatio(aos.p99_us, iox.p99_us));
    json.Key("messages_per_second_ratio")
        .Number(SafeRatio(p.arms[kAos].messages_per_second(),
                          p.arms[kIceoryx].messages_per_second()));
    json.EndObject();
  }
  json.EndArray();
  json.Key("goals").BeginObject();
  json.Key("wakeup_p50_at_most").Number(kWakeupGoal);
  json.Key("wakeup_met").Bool(v.wakeup_met);
  json.Key("messages_per_second_at_least").Number(kThroughputGoal);
  json.Key("throughput_met").Bool(v.throughput_met);
  json.EndObject();
  json.EndObject();
  return json.Text();
}

int Main() {
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99,
                               " is not a SCHED_FIFO priority: give 1-99, or "
                               "0 for normal scheduling"));
  ExitOnFlagError(CheckInRange("--rate_hz", FLAGS_rate_hz, 1, 100000));
  ExitOnFlagError(CheckAtLeast("--count", FLAGS_count, 1));
  ExitOnFlagError(CheckInRange("--throughput_seconds", FLAGS_throughput_seconds,
                               0.1, 600.0));
  ExitOnFlagError(CheckInRange("--runs", FLAGS_runs, 2, 1000));
  if (FLAGS_runs % 2 != 0) {
    ExitOnFlagError(FlagError("--runs", FLAGS_runs,
                              " is odd: give an even number, so that both "
                              "arms run as often"));
  }
  absl::StatusOr<std::vector<int>> payloads = ParsePayloads(FLAGS_payloads);
  ExitOnFlagError(payloads.status());
  struct stat st;
  if (FLAGS_work_dir.empty() || stat(FLAGS_work_dir.c_str(), &st) != 0 ||
      !S_ISDIR(st.st_mode)) {
    ExitForUserError(StrCat("--work_dir=", FLAGS_work_dir,
                            " is not a directory: give one that exists"));
  }
  FlagOutputFile json_file("--json", FLAGS_json);
  BenchPrograms check(FLAGS_bin_dir, FLAGS_work_dir);
  std::vector<std::string> programs;
  for (const char* program : kArmPrograms)
    programs.push_back(check.Path(program));
  const std::vector<std::string> missing = MissingFiles(programs);
  if (!missing.empty()) {
    ExitForUserError(StrCat("--bin_dir=", FLAGS_bin_dir, ": no ", missing[0],
                            " (build //tools/bench:aos_pingpong and "
                            "//tools/bench:iceoryx_pingpong)"));
  }

  const MachineInfo machine = ReadMachineInfo();
  Bench bench(*std::move(payloads));
  bench.Run();
  const Verdicts v = Print(machine, bench.figures());
  if (json_file.enabled()) {
    json_file.WriteAndClose(Json(machine, bench.figures(), v));
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: ipc_bench --work_dir=DIR [--priority=80] [--rate_hz=1000] "
      "[--count=5000] [--throughput_seconds=2] [--runs=4] "
      "[--payloads=32,1024] [--json=FILE] [--bin_dir=bazel-bin]\n"
      "Our shared-memory channels beside iceoryx 2.0, in the same run "
      "(tools/bench/ipc.sh starts iox-roudi and runs this).");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
