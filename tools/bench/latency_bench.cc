// The driver behind tools/bench/latency.sh: how much later than the machine
// itself does aos wake you up? Every figure of ours is measured in the same
// run, at the same priority and interval, as the OS-level baseline it is
// compared with (cyclictest, sigwaittest -f, ptsematest), and runs alternate
// A/B/A/B so drift hits both. Prints a table, writes a JSON file with every
// figure and an OSADL-style latency plot (gnuplot).
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_report_codec.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/starter/launcher.h"
#include "aos/tools/latency_plot.h"
#include "aos/util/cpu_latency_limit.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_document.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/bench/bench_figures.h"
#include "tools/bench/bench_harness.h"
#include "tools/bench/bench_inputs.h"
#include "tools/bench/rt_tests.h"
#include "tools/bench/scale_section.h"

DEFINE_string(bin_dir, "bazel-bin", "Where the aos binaries were built.");
DEFINE_bool(long_run, false,
            "A serious run: 6 rounds of 20 s per measurement, not 4 of 2.5 s.");
DEFINE_string(json, "bench_latency.json", "Where to write every figure.");
DEFINE_string(plot, "bench_latency.png", "Where to write the latency plot.");
DEFINE_int32(priority, 80, "SCHED_FIFO priority of every measured thread.");
DEFINE_int32(interval_us, 1000, "Timer / message interval.");
DEFINE_bool(main_job_only, false,
            "Only the main job with and without the CPU wakeup limit (no "
            "JSON, no plot).");
DEFINE_bool(scale, true,
            "Run the scale section last: timers in one loop and watcher "
            "processes on one channel, each row beside cyclictest -t N "
            "(--noscale skips it).");
DEFINE_bool(scale_only, false,
            "Only the scale section (with the CPU wakeup limit held; the "
            "JSON holds the machine and the scale rows; no plot).");
DEFINE_string(scale_timers, "1,10,100,1000",
              "Timer counts of the scale section's rows, each at 1 kHz and "
              "100 Hz, due together and spread.");
DEFINE_string(scale_watchers, "1,4,16,64",
              "Watcher process counts of the scale section's rows (1 kHz).");
DEFINE_double(scale_seconds, 0,
              "Seconds each side of a scale row is measured (0: 3, or 15 "
              "with --long_run).");
DEFINE_int32(scale_p99_pairs, 2,
             "Pairs of runs (0-20, each --scale_seconds) of 1 timer and 100 "
             "timers due together at 1 kHz, back to back, that the p99 goal "
             "is judged on (the rows run minutes apart, and a VM's tail "
             "drifts); 0: judge it on the rows.");

namespace aos::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A duration in seconds, for flags and rates.
double Seconds(std::chrono::duration<double> duration) {
  return duration.count();
}

// The accumulated lines of a streamer's JSON output, decoded, by
// application name.
std::map<std::string, timing::ReportContents> AccumulatedReports(
    const std::string& out) {
  const reflection::Schema& schema =
      *reflection::GetSchema(timing::StreamedReportBinarySchema::data());
  std::map<std::string, timing::ReportContents> reports;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto parsed =
        JsonToFlatbuffer(line, schema, {.source_name = "streamer output"});
    CHECK(parsed.ok()) << parsed.status().message();
    const auto* streamed =
        flatbuffers::GetRoot<timing::StreamedReport>(parsed->data());
    if (!streamed->accumulated()) continue;
    auto report = timing::DecodeTimingReport(*streamed->report());
    CHECK(report.ok()) << report.status().message();
    reports.emplace(report->header.name, std::move(report).value());
  }
  return reports;
}

// Adds `latency` to running totals.
void MergeLatency(const timing::LatencyRecorder& latency,
                  timing::RunningStatistic* statistic,
                  timing::LatencyHistogram* histogram) {
  statistic->Merge(latency.statistic());
  histogram->Merge(latency.histogram());
}

class Bench {
 public:
  Bench()
      : work_dir_(MakeWorkDir()),
        programs_(FLAGS_bin_dir, work_dir_),
        config_(ReadConfig(Binary("examples/pingpong_config.json"))),
        scale_config_(ReadConfig(Binary("tools/bench/scale_config.json"))),
        scale_watchers_config_(
            ReadConfig(Binary("tools/bench/scale_watchers_config.json"))) {}
  ~Bench() { std::filesystem::remove_all(work_dir_); }

  std::string Binary(std::string_view path) const {
    return programs_.Path(path);
  }
  int64_t Loops() const { return duration_.count() * 1000 / FLAGS_interval_us; }

  // A private shared memory directory for one run.
  std::string ShmBase() {
    char base[] = "/dev/shm/aos_bench_XXXXXX";
    CHECK(mkdtemp(base) != nullptr);
    shm_bases_.push_back(base);
    return base;
  }

  // A new file name in the work directory, for a program's JSON output.
  std::string WorkFile(std::string_view stem) {
    return StrCat(work_dir_, "/", stem, ".", ++work_files_, ".json");
  }

  // What `read` makes of the JSON file at `path`; aborts with the reason
  // if the file or what `read` wants is not there.
  template <typename T, typename Reader>
  static T Read(const std::string& path, Reader read) {
    absl::StatusOr<JsonDocument> json = JsonDocument::ReadFile(path);
    CHECK(json.ok()) << json.status().message();
    absl::StatusOr<T> value = read(json->root());
    CHECK(value.ok()) << value.status().message();
    return std::move(value).value();
  }

  std::unique_ptr<Subprocess> Start(std::string_view binary,
                                    std::vector<std::string> args) {
    return programs_.Start(binary, std::move(args));
  }

  // The long-running programs of one run (ping, pong, scale_app), on the
  // run's shared memory: each is started through the launcher
  // (aos/starter/launcher.h) and known to run before what needs it starts,
  // and all stop, in reverse order, when the run ends. Their output goes to
  // NAME.out and NAME.err in the work directory.
  class Run {
   public:
    // Watches `shm_base` through `config`, which must outlive it.
    Run(Bench* bench, const Configuration* config, const std::string& shm_base)
        : bench_(bench),
          loop_(MakeLoop(config, shm_base)),
          launcher_(loop_.get(), bench->work_dir()) {}

    // Starts the program `binary` (its workspace path) as the application
    // `name` (its event loop's name) with `args`; `reports` says whether it
    // sends timing reports. Ends the bench, naming it, if it cannot start.
    void Launch(std::string name, std::string_view binary,
                std::vector<std::string> args, bool reports = true) {
      const absl::Status started =
          launcher_.Start({.name = std::move(name),
                           .binary = bench_->Binary(binary),
                           .args = std::move(args),
                           .network_namespace = "",
                           .reports = reports});
      if (!started.ok()) {
        FailWithOutput(std::string(started.message()), nullptr);
      }
    }

    // Waits until everything launched with reports has sent its first
    // timing report; ends the bench with the launcher's reason (which one
    // died, and what it said, or stayed silent) if not within 30 s.
    void WaitUntilReporting() {
      const absl::Status up = launcher_.WaitUntilReporting(seconds(30));
      if (!up.ok()) FailWithOutput(std::string(up.message()), nullptr);
    }

    // pong with its timing reports off sends none to wait for: it runs once
    // it answers a Ping. Sends one (value 0; ping's count from 1) every
    // 10 ms until a Pong with that value comes back, ending the bench if
    // pong exits or stays silent for 30 s. The repeats are needed because
    // a watcher sees only what is sent after it started; for the same
    // reason ping, started later, never sees these answers.
    void WaitUntilPongAnswers() {
      Sender<examples::Ping> probe = loop_->MakeSender<examples::Ping>("/test");
      Fetcher<examples::Pong> answers =
          loop_->MakeFetcher<examples::Pong>("/test");
      const std::chrono::steady_clock::time_point end =
          std::chrono::steady_clock::now() + seconds(30);
      while (true) {
        auto builder = probe.MakeBuilder();
        examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
        ping.add_value(0);
        ping.add_send_time(loop_->monotonic_now().time_since_epoch().count());
        CHECK(builder.Send(ping.Finish()) == RawSender::Error::kOk)
            << "cannot send a Ping on /test to see whether pong answers";
        std::this_thread::sleep_for(milliseconds(10));
        while (answers.FetchNext()) {
          if (answers->value() == 0) return;
        }
        if (!launcher_.Running("pong")) {
          FailWithOutput(StrCat("pong exited before it answered a ping; it "
                                "said:\n",
                                launcher_.Stderr("pong")),
                         nullptr);
        }
        if (std::chrono::steady_clock::now() >= end) {
          FailWithOutput("pong (timing reports off) answered no ping in 30 s",
                         nullptr);
        }
      }
    }

    // The CPU time the application `name` has used so far, seconds (to the
    // nanosecond: bench_harness.h's ProcessCpuSeconds).
    double CpuSeconds(std::string_view name) const {
      return ProcessCpuSeconds(launcher_.Pid(name));
    }

    // Stops everything launched (SIGTERM, then 5 s), last started first.
    // With `must_end_well`, ends the bench with its output if one exited
    // other than 0 or had to be killed.
    void StopAll(bool must_end_well) {
      for (const starter::Launcher::Stopped& stopped :
           launcher_.StopAll(seconds(5))) {
        if (!must_end_well || (stopped.status == 0 && !stopped.killed)) {
          continue;
        }
        std::cerr << "--- " << stopped.name << "'s stderr\n"
                  << launcher_.Stderr(stopped.name) << "\n";
        FailWithOutput(
            StrCat(stopped.name, " exited ", stopped.status,
                   stopped.killed ? " (killed: SIGTERM ignored)" : ""),
            nullptr);
      }
    }

   private:
    static std::unique_ptr<ShmEventLoop> MakeLoop(const Configuration* config,
                                                  const std::string& shm_base) {
      // A loop reads --shm_base once, when it is made, as AOS's do.
      FLAGS_shm_base = shm_base;
      return std::make_unique<ShmEventLoop>(config, "latency_bench");
    }

    Bench* bench_;
    // Never runs: the launcher fetches first reports from it, and pong's
    // readiness probe sends and fetches on it.
    std::unique_ptr<ShmEventLoop> loop_;
    starter::Launcher launcher_;
  };

  // ping + pong (+ the streamer): ping's timer, pong's watcher, round trip.
  struct PingPongOptions {
    bool reports = true;
    int priority = FLAGS_priority;
    int interval_us = FLAGS_interval_us;
    // Extra flags of ping and of pong.
    std::vector<std::string> ping_args;
    std::vector<std::string> pong_args;
  };
  struct PingPongRun {
    timing::LatencyHistogram timer, watcher;
    timing::RunningStatistic timer_stat, watcher_stat;
    double round_trip_avg_us = NAN;
    double round_trip_p50_us = NAN;
    // The CPU latency limit pong's reports say it held, and its idle
    // poller's CPUs ("" for none).
    int32_t pong_cpu_latency_limit_us = -1;
    std::string pong_cpu_latency_limit_cpus;
    std::string pong_idle_poll_cpus;
    // Ping's timer anticipation (its reports' lead at the end, the share of
    // its timer wakeups that came early, and the ns it spun).
    int64_t ping_anticipation_lead_ns = 0;
    double ping_early_fraction = NAN;
    uint64_t ping_anticipation_ns = 0;
    // CPU time ping and pong used while the streamer listened, in % of
    // one CPU (NAN without reports).
    double cpu_percent = NAN;
  };
  PingPongRun RunPingPong(const PingPongOptions& options) {
    const std::string base = ShmBase();
    const std::vector<std::string> common = {
        "--config=" + Binary("examples/pingpong_config.json"),
        "--shm_base=" + base, StrCat("--priority=", options.priority),
        StrCat("--timing_reports=", options.reports)};
    auto with = [&](const std::vector<std::string>& extra) {
      std::vector<std::string> args = common;
      args.insert(args.end(), extra.begin(), extra.end());
      return args;
    };
    Run programs(this, &config_.message(), base);
    // pong answers before ping sends its first ping.
    programs.Launch("pong", "examples/pong", with(options.pong_args),
                    options.reports);
    if (options.reports) {
      programs.WaitUntilReporting();
    } else {
      programs.WaitUntilPongAnswers();
    }
    std::vector<std::string> ping_args = options.ping_args;
    ping_args.push_back(StrCat("--sleep_us=", options.interval_us));
    const std::string summary = WorkFile("ping_summary");
    ping_args.push_back("--summary_json=" + summary);
    programs.Launch("ping", "examples/ping", with(ping_args), options.reports);
    PingPongRun run;
    if (options.reports) {
      const double cpu_before =
          programs.CpuSeconds("ping") + programs.CpuSeconds("pong");
      const auto listen_start = std::chrono::steady_clock::now();
      auto streamer = Start(
          "aos/tools/aos_timing_report_streamer",
          {"--config=" + Binary("examples/pingpong_config.json"),
           "--shm_base=" + base, "--application=ping,pong", "--stream=false",
           "--format=json", StrCat("--duration=", Seconds(duration_) + 0.5)});
      ExitUnlessSucceeded(*streamer, "the streamer");
      run.cpu_percent =
          100.0 *
          (programs.CpuSeconds("ping") + programs.CpuSeconds("pong") -
           cpu_before) /
          Seconds(std::chrono::steady_clock::now() - listen_start);
      const auto accumulated = AccumulatedReports(streamer->Stdout());
      CHECK(accumulated.contains("ping") && accumulated.contains("pong"))
          << "the streamer saw no reports of ping and pong:\n"
          << streamer->Stderr();
      for (const timing::TimerTiming& t : accumulated.at("ping").timers) {
        if (t.name != "ping") continue;
        MergeLatency(t.wakeup_latency, &run.timer_stat, &run.timer);
      }
      const timing::ReportContents& pong_report = accumulated.at("pong");
      for (const timing::WatcherTiming& w : pong_report.watchers) {
        MergeLatency(w.wakeup_latency, &run.watcher_stat, &run.watcher);
      }
      run.pong_cpu_latency_limit_us = pong_report.header.cpu_latency_limit_us;
      run.pong_cpu_latency_limit_cpus =
          pong_report.header.cpu_latency_limit_cpus;
      run.pong_idle_poll_cpus = pong_report.header.idle_poll_cpus;
      const timing::ReportHeader& ping_header = accumulated.at("ping").header;
      run.ping_anticipation_lead_ns = ping_header.timer_anticipation_lead_ns;
      run.ping_anticipation_ns = ping_header.timer_anticipation_ns;
      if (ping_header.timer_wakeups > 0) {
        run.ping_early_fraction =
            static_cast<double>(ping_header.timer_wakeups_early) /
            static_cast<double>(ping_header.timer_wakeups);
      }
    } else {
      std::this_thread::sleep_for(duration_ + std::chrono::milliseconds(500));
    }
    programs.StopAll(/*must_end_well=*/true);
    const RoundTrip round_trip = Read<RoundTrip>(
        summary, [](const JsonValue& root) { return ReadPingSummary(root); });
    run.round_trip_avg_us = round_trip.avg_us;
    run.round_trip_p50_us = round_trip.p50_us;
    return run;
  }

  // cyclictest's histogram (1 us classes) and figures, at --priority and
  // --interval_us unless given.
  Figures RunCyclictest(int priority = FLAGS_priority,
                        int interval_us = FLAGS_interval_us) {
    return RunRtTool(
        "cyclictest",
        {"--mlockall", StrCat("-p", priority), StrCat("-i", interval_us),
         StrCat("-l", duration_.count() * 1000 / interval_us),
         "--histogram=10000", "-q"});
  }

  // Any rt-tests tool, read from its --json file (rt_tests.h); the figures
  // are named after the tool.
  Figures RunRtTool(std::string_view tool, std::vector<std::string> args) {
    absl::StatusOr<Figures> figures =
        RunRtTest(tool, std::move(args), work_dir_);
    CHECK(figures.ok()) << figures.status().message();
    return std::move(figures).value();
  }

  // The event loop driven the way sigwaittest drives its signals (the
  // receiver replies an interval after each message, and the sender sends
  // the next one when the reply arrives), from shm_wakeup_benchmark: the
  // receiver's CPU has just gone idle before each measured wakeup, as in
  // sigwaittest, where ping/pong's has been idle for a whole interval.
  Figures RunLoopLikeSigwaittest() {
    const std::string json = WorkFile("shm_wakeup");
    auto run = Start(
        "tools/bench/shm_wakeup_benchmark",
        {"--run_timer_driven=false", "--run_floor=false", "--run_tools=false",
         "--run_ping_pong=true", StrCat("--priority=", FLAGS_priority),
         StrCat("--interval_us=", FLAGS_interval_us),
         StrCat("--loops=", Loops()), "--json=" + json});
    ExitUnlessSucceeded(*run, "shm_wakeup_benchmark");
    Figures f = Read<Figures>(json, [](const JsonValue& root) {
      return ReadShmWakeupRow(root, "ping_pong");
    });
    f.name = "aos, sigwaittest-driven";
    return f;
  }

  // scale_section.h's `load` with our loop: scale_app with N timers, or N
  // scale_app watchers and ping sending to them, at --priority, measured
  // for `seconds` once each has reported: wakeup latency from their timing
  // reports, calls a second from the reports' windows, and CPU (of the
  // timers' loop, or of every watcher process; the sender's apart) over
  // the wall time measured. The run's shared memory (the 1000-timer
  // reports make /aos large) is removed at once.
  struct ScaleOurs {
    ScaleSide side;
    double sender_cpu_percent = NAN;
  };
  ScaleOurs RunScaleOurs(const ScaleLoad& load, double seconds) {
    const std::string base = ShmBase();
    // Room for 1000 timers' histograms (scale.json) or for 64 watchers
    // (scale_watchers.json).
    const bool timers = load.timers > 0;
    const std::string config =
        "--config=" + Binary(timers ? "tools/bench/scale_config.json"
                                    : "tools/bench/scale_watchers_config.json");
    Run programs(
        this,
        timers ? &scale_config_.message() : &scale_watchers_config_.message(),
        base);
    const std::string priority = StrCat("--priority=", FLAGS_priority);
    // The applications whose CPU time is the row's.
    std::vector<std::string> apps;
    if (load.timers > 0) {
      apps.push_back("scale_timers");
      programs.Launch(apps.back(), "tools/bench/scale_app",
                      {config, "--shm_base=" + base, "--name=" + apps.back(),
                       StrCat("--timers=", load.timers),
                       StrCat("--interval_us=", load.interval_us),
                       StrCat("--phases=", load.Phases()), priority});
      programs.WaitUntilReporting();
    } else {
      for (int i = 0; i < load.watchers; ++i) {
        apps.push_back(StrCat("watcher_", i));
        programs.Launch(apps.back(), "tools/bench/scale_app",
                        {config, "--shm_base=" + base, "--name=" + apps.back(),
                         "--watch", priority});
      }
      // Every watcher watches before the first ping.
      programs.WaitUntilReporting();
      programs.Launch("ping", "examples/ping",
                      {config, "--shm_base=" + base,
                       StrCat("--sleep_us=", load.interval_us), priority});
      programs.WaitUntilReporting();
    }
    auto cpu_now = [&]() {
      double cpu = 0;
      for (const std::string& app : apps) cpu += programs.CpuSeconds(app);
      return cpu;
    };
    const double cpu_before = cpu_now();
    const double sender_before =
        load.watchers > 0 ? programs.CpuSeconds("ping") : NAN;
    const auto wall_before = std::chrono::steady_clock::now();
    auto streamer = Start("aos/tools/aos_timing_report_streamer",
                          {config, "--shm_base=" + base, "--stream=false",
                           "--format=json", StrCat("--duration=", seconds)});
    ExitUnlessSucceeded(*streamer, "the streamer");
    const double wall = Seconds(std::chrono::steady_clock::now() - wall_before);
    ScaleOurs ours;
    ours.side.cpu_percent =
        CpuUse{.cpu_seconds = cpu_now() - cpu_before, .wall_seconds = wall}
            .Percent();
    if (load.watchers > 0) {
      ours.sender_cpu_percent =
          CpuUse{.cpu_seconds = programs.CpuSeconds("ping") - sender_before,
                 .wall_seconds = wall}
              .Percent();
    }
    timing::LatencyHistogram histogram;
    timing::RunningStatistic statistic;
    double calls_per_s = 0;
    int reporting = 0;
    for (const auto& [name, report] : AccumulatedReports(streamer->Stdout())) {
      const bool ours_app =
          std::find(apps.begin(), apps.end(), name) != apps.end();
      if (!ours_app) continue;
      ++reporting;
      if (report.header.dropped_histograms > 0) {
        std::cerr << "latency_bench: " << name << " dropped "
                  << report.header.dropped_histograms
                  << " histograms to fit /aos's max_size: the percentiles "
                     "of '"
                  << load.Name() << "' miss them (raise max_size in "
                  << "tools/bench/scale.json)\n";
      }
      if (report.header.send_failures > 0) {
        std::cerr << "latency_bench: " << name << " could not send "
                  << report.header.send_failures
                  << " of its timing reports (/aos's frequency or "
                     "num_senders in its config): '"
                  << load.Name() << "' misses their figures\n";
      }
      uint64_t calls = 0;
      for (const timing::TimerTiming& t : report.timers) {
        if (t.name == "timing_reports") continue;
        MergeLatency(t.wakeup_latency, &statistic, &histogram);
        calls += t.count;
        ours.side.missed_cycles += t.missed_cycles;
      }
      // Timers due together start one after another.
      ours.side.call_spacing_us = CallSpacingUs(load, report.timers);
      for (const timing::WatcherTiming& w : report.watchers) {
        MergeLatency(w.wakeup_latency, &statistic, &histogram);
        calls += w.count;
      }
      const double window_s = report.header.window_ns() * 1e-9;
      if (window_s > 0) calls_per_s += static_cast<double>(calls) / window_s;
    }
    if (reporting != static_cast<int>(apps.size())) {
      FailWithOutput(
          StrCat("the streamer saw reports of ", reporting, " of ", apps.size(),
                 " applications of '", load.Name(), "' in ", seconds, " s"),
          streamer.get());
    }
    ours.side.calls_per_s = calls_per_s;
    ours.side.latency = FromHistogram(load.Name(), histogram, statistic);
    programs.StopAll(/*must_end_well=*/false);
    std::filesystem::remove_all(base);
    return ours;
  }

  // cyclictest -t N beside `load` (scale_section.h's CyclictestScaleArgs)
  // for `seconds` after its threads have started, its CPU time (from its
  // clock, every thread) over those seconds: latency of every thread
  // pooled, CPU, and its thread wakeups a second.
  ScaleSide RunScaleCyclictest(const ScaleLoad& load, double seconds) {
    // Starting 1000 threads and locking their memory takes a while; that is
    // not measured.
    const double warmup_s = 0.5 + 0.0005 * load.Count();
    std::vector<std::string> args = CyclictestScaleArgs(load, FLAGS_priority);
    args.push_back(
        StrCat("-l", static_cast<int64_t>(std::ceil((warmup_s + seconds + 0.3) *
                                                    1e6 / load.interval_us))));
    RtTestRun run("cyclictest", std::move(args), work_dir_);
    std::this_thread::sleep_for(std::chrono::duration<double>(warmup_s));
    const double cpu_before = ProcessCpuSeconds(run.pid());
    const auto wall_before = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double cpu_after = ProcessCpuSeconds(run.pid());
    const double wall = Seconds(std::chrono::steady_clock::now() - wall_before);
    absl::StatusOr<Figures> figures = run.Finish();
    if (!figures.ok()) {
      FailWithOutput(StrCat("cyclictest beside '", load.Name(),
                            "': ", figures.status().message()),
                     nullptr);
    }
    ScaleSide side;
    side.latency = *std::move(figures);
    side.latency.name = StrCat("cyclictest -t ", load.Count());
    side.cpu_percent =
        CpuUse{.cpu_seconds = cpu_after - cpu_before, .wall_seconds = wall}
            .Percent();
    side.calls_per_s = load.CallsPerSecond();
    return side;
  }

  // How many watchers /test aos.examples.Ping and senders /aos
  // aos.timing.Report have in the watcher rows' config.
  std::pair<int, int> ScaleConfigCapacity() const {
    int watchers = 0;
    int senders = 0;
    for (const Channel* channel :
         *scale_watchers_config_.message().channels()) {
      const std::string_view name = channel->name()->string_view();
      const std::string_view type = channel->type()->string_view();
      if (name == "/test" && type == "aos.examples.Ping") {
        watchers = channel->num_watchers();
      }
      if (name == "/aos" && type == "aos.timing.Report") {
        senders = channel->num_senders();
      }
    }
    return {watchers, senders};
  }

  // The wall-clock cost of each of `names`, microbenchmarks of `binary`, in
  // ns, from one run's --benchmark_format=json output.
  std::vector<double> Microbenchmarks(std::string_view binary,
                                      const std::vector<std::string>& names) {
    auto run = Start(
        binary, {StrCat("--benchmark_filter=^(", StrJoin(names, "|"), ")$"),
                 "--benchmark_min_time=0.2", "--benchmark_format=json"});
    ExitUnlessSucceeded(*run, binary);
    absl::StatusOr<JsonDocument> json =
        JsonDocument::Parse(run->Stdout(), StrCat(binary, "'s output"));
    CHECK(json.ok()) << json.status().message();
    std::vector<double> ns;
    for (const std::string& name : names) {
      absl::StatusOr<double> cost = MicrobenchmarkNs(json->root(), name);
      CHECK(cost.ok()) << cost.status().message();
      ns.push_back(*cost);
    }
    return ns;
  }

  void SetDuration(milliseconds duration) { duration_ = duration; }
  milliseconds duration() const { return duration_; }
  const std::string& work_dir() const { return work_dir_; }
  void CleanShm() {
    for (const std::string& base : shm_bases_)
      std::filesystem::remove_all(base);
  }

 private:
  static std::string MakeWorkDir() {
    char dir[] = "/tmp/aos_bench_XXXXXX";
    CHECK(mkdtemp(dir) != nullptr);
    return dir;
  }
  static FlatbufferDetachedBuffer<Configuration> ReadConfig(
      const std::string& path) {
    auto config = configuration::ReadConfig(path);
    CHECK(config.ok()) << config.status().message();
    return std::move(config).value();
  }

  std::string work_dir_;
  BenchPrograms programs_;
  FlatbufferDetachedBuffer<Configuration> config_;
  // The scale section's timer rows' (tools/bench/scale.json) and watcher
  // rows' (scale_watchers.json).
  FlatbufferDetachedBuffer<Configuration> scale_config_;
  FlatbufferDetachedBuffer<Configuration> scale_watchers_config_;
  std::vector<std::string> shm_bases_;
  int work_files_ = 0;
  milliseconds duration_{2500};
};

bool SchedFifoGranted() {
  struct sched_param param = {};
  param.sched_priority = FLAGS_priority;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) return false;
  param.sched_priority = 0;
  sched_setscheduler(0, SCHED_OTHER, &param);
  return true;
}

// The samples of `f`'s 1 us classes (read at their middle) and overflows
// (at the maximum) as one curve of the streamer's OSADL-style plot.
PlottedLatency ToPlotted(std::string label, const Figures& f) {
  PlottedLatency plotted{std::move(label), {}};
  for (const auto& [bin, count] : f.bins) {
    for (uint64_t i = 0; i < count; ++i)
      plotted.histogram.Record(bin * 1000 + 500);
  }
  for (uint64_t i = 0; i < f.overflows; ++i) {
    plotted.histogram.Record(static_cast<int64_t>(f.max_us * 1000));
  }
  return plotted;
}

// The plot the streamer's --plot draws (aos/tools/latency_plot.h): x on the
// range that shows the distributions, the far maxima marked at the edge.
void WritePlot(const Figures& ours, const Figures& cyclictest) {
  const absl::Status status = WriteLatencyPlot(
      {ToPlotted("cyclictest", cyclictest), ToPlotted("aos ping timer", ours)},
      FLAGS_plot,
      StrCat("Timer wakeup latency: aos ping timer vs cyclictest (SCHED_FIFO ",
             FLAGS_priority, ", ", FLAGS_interval_us, " us, ", ours.count,
             " + ", cyclictest.count, " samples)"));
  if (!status.ok()) {
    std::cerr << "latency_bench: " << status.message()
              << "; the plot was not written\n";
  }
}

// The main job as `tools/aos.sh run` starts it (ping and pong at 100 Hz,
// SCHED_FIFO 5, both on the last CPU), and the other ways to place and wake
// them: floating with and without the CPU latency limit the loops hold, at
// normal priority, with an idle poller, and pinned apart with the limit on
// all CPUs or only their own; beside cyclictest at the same rate and
// priority, floating and on run's CPU, in rounds. Run before the bench takes
// its own hold, so "without" is without.
struct MainJobRow {
  std::string name;
  Bench::PingPongOptions options;
  timing::LatencyHistogram timer, watcher;
  timing::RunningStatistic timer_stat, watcher_stat;
  // What pong's reports said it held, and ping's and pong's CPU use (mean of
  // the rounds, % of one CPU).
  std::string held = "?";
  double cpu_percent_sum = 0;
  int runs = 0;

  Figures Timer() const { return FromHistogram(name, timer, timer_stat); }
  Figures Watcher() const { return FromHistogram(name, watcher, watcher_stat); }
  double CpuPercent() const { return runs == 0 ? NAN : cpu_percent_sum / runs; }
};

struct MainJob {
  std::vector<MainJobRow> rows;
  Figures cyclictest, cyclictest_on_run_cpu;
  // The CPU run puts ping and pong on.
  int run_cpu = 0;
  int rounds = 0;
  std::chrono::milliseconds duration{0};

  // The row named `name` (every name below exists, or this is a bug).
  const MainJobRow& Row(std::string_view name) const {
    for (const MainJobRow& r : rows) {
      if (r.name == name) return r;
    }
    LOG(FATAL) << "no main job row " << name;
  }
};

constexpr std::string_view kRunDefault = "FIFO 5, one CPU (run)";
constexpr std::string_view kFloating = "FIFO 5, floating";
constexpr std::string_view kNoLimit = "FIFO 5, no limit";
constexpr std::string_view kNormal = "normal priority";
constexpr std::string_view kIdlePoll = "FIFO 5, idle poller";
constexpr std::string_view kNoAnticipation = "FIFO 5, one CPU, armed on time";

// The last CPU this process may run on: where tools/aos.sh run puts ping
// and pong.
int LastAllowedCpu() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  PCHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0);
  int last = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) last = cpu;
  }
  return last;
}

MainJob RunMainJob(Bench* bench) {
  constexpr int kPriority = 5;
  constexpr int kIntervalUs = 10000;
  auto row = [&](std::string_view name, int priority,
                 std::vector<std::string> flags,
                 std::vector<std::string> ping_only = {},
                 std::vector<std::string> pong_only = {}) {
    MainJobRow r;
    r.name = name;
    r.options.priority = priority;
    r.options.interval_us = kIntervalUs;
    r.options.ping_args = flags;
    r.options.ping_args.insert(r.options.ping_args.end(), ping_only.begin(),
                               ping_only.end());
    r.options.pong_args = flags;
    r.options.pong_args.insert(r.options.pong_args.end(), pong_only.begin(),
                               pong_only.end());
    return r;
  };
  MainJob job;
  job.rounds = FLAGS_long_run ? 4 : 3;
  job.duration = FLAGS_long_run ? seconds(20) : seconds(5);
  job.run_cpu = LastAllowedCpu();
  const std::string run_affinity = StrCat("--affinity=", job.run_cpu);
  job.rows.push_back(row(kRunDefault, kPriority, {run_affinity}));
  job.rows.push_back(row(kNoAnticipation, kPriority,
                         {run_affinity, "--timer_anticipation_us=0"}));
  job.rows.push_back(row(kFloating, kPriority, {}));
  job.rows.push_back(row(kNoLimit, kPriority, {"--cpu_dma_latency_us=-1"}));
  job.rows.push_back(row(kNormal, 0, {}));
  job.rows.push_back(row(kIdlePoll, kPriority, {"--idle_poll"}));
  if (std::thread::hardware_concurrency() >= 2) {
    job.rows.push_back(row("FIFO 5 pinned apart, all CPUs", kPriority,
                           {"--cpu_dma_latency_scope=all"}, {"--affinity=0"},
                           {"--affinity=1"}));
    job.rows.push_back(row("FIFO 5 pinned apart, per CPU", kPriority,
                           {"--cpu_dma_latency_scope=cpus"}, {"--affinity=0"},
                           {"--affinity=1"}));
  }
  const std::chrono::milliseconds saved = bench->duration();
  bench->SetDuration(job.duration);
  std::vector<Figures> cyclictest, cyclictest_on_run_cpu;
  for (int round = 0; round < job.rounds; ++round) {
    std::cerr << "main job round " << round + 1 << "/" << job.rounds
              << ": ping/pong placed and woken " << job.rows.size()
              << " ways, cyclictest -p5 -i10000 floating and on CPU "
              << job.run_cpu << "\n";
    for (MainJobRow& r : job.rows) {
      const Bench::PingPongRun run = bench->RunPingPong(r.options);
      r.timer.Merge(run.timer);
      r.timer_stat.Merge(run.timer_stat);
      r.watcher.Merge(run.watcher);
      r.watcher_stat.Merge(run.watcher_stat);
      r.cpu_percent_sum += run.cpu_percent;
      ++r.runs;
      r.held =
          run.pong_cpu_latency_limit_us < 0
              ? "none"
              : StrCat(run.pong_cpu_latency_limit_us, " us, ",
                       run.pong_cpu_latency_limit_cpus == "all"
                           ? "all CPUs"
                           : StrCat("CPU ", run.pong_cpu_latency_limit_cpus));
      if (!run.pong_idle_poll_cpus.empty()) {
        r.held += StrCat("; idle poller on CPUs ", run.pong_idle_poll_cpus);
      }
      if (run.ping_anticipation_lead_ns > 0) {
        r.held += StrCat(
            "; ping armed ", ThreeDigits(run.ping_anticipation_lead_ns * 1e-3),
            " us early, ", ThreeDigits(100.0 * run.ping_early_fraction),
            " % of wakeups early");
      }
    }
    cyclictest.push_back(bench->RunCyclictest(kPriority, kIntervalUs));
    cyclictest_on_run_cpu.push_back(bench->RunRtTool(
        "cyclictest", {"--mlockall", StrCat("-p", kPriority),
                       StrCat("-i", kIntervalUs), StrCat("-a", job.run_cpu),
                       StrCat("-l", job.duration.count() * 1000 / kIntervalUs),
                       "--histogram=10000", "-q"}));
  }
  bench->SetDuration(saved);
  job.cyclictest = Merge("cyclictest -p5 -i10000", cyclictest);
  job.cyclictest_on_run_cpu =
      Merge(StrCat("cyclictest ... -a", job.run_cpu), cyclictest_on_run_cpu);
  return job;
}

// Lower is better: how many times lower `ours` is than `other`.
std::string TimesLower(double ours, double other) {
  return RatioText(other, ours);
}

// Met or MISSED.
const char* Verdict(bool met) { return met ? "met" : "MISSED"; }

void PrintMainJob(const MainJob& job, const std::string& cpuidle) {
  printf(
      "Main job: ping + pong at 100 Hz, %d rounds of %lld s per row; run "
      "puts both on CPU %d\n"
      "Wakeup latency (us)         pong watcher: %6s %6s %6s   ping timer: "
      "%6s %6s %6s   CPU %%   held (pong), ping armed early\n",
      job.rounds, static_cast<long long>(job.duration.count() / 1000),
      job.run_cpu, "p50", "p99", "max", "p50", "p99", "max");
  for (const MainJobRow& r : job.rows) {
    const Figures watcher = r.Watcher();
    const Figures timer = r.Timer();
    printf("  %-29s %16s %6s %6s   %11s %6s %6s  %6s   %s\n", r.name.c_str(),
           ThreeDigits(watcher.p50_us).c_str(),
           ThreeDigits(watcher.p99_us).c_str(),
           ThreeDigits(watcher.max_us).c_str(),
           ThreeDigits(timer.p50_us).c_str(), ThreeDigits(timer.p99_us).c_str(),
           ThreeDigits(timer.max_us).c_str(),
           ThreeDigits(r.CpuPercent()).c_str(), r.held.c_str());
  }
  for (const Figures* c : {&job.cyclictest, &job.cyclictest_on_run_cpu}) {
    printf("  %-29s %16s %6s %6s   %11s %6s %6s  %6s   0 us, all CPUs\n",
           c->name.c_str(), "", "", "", ThreeDigits(c->p50_us).c_str(),
           ThreeDigits(c->p99_us).c_str(), ThreeDigits(c->max_us).c_str(), "");
  }
  const Figures run = job.Row(kRunDefault).Watcher();
  const Figures floating = job.Row(kFloating).Watcher();
  const Figures free = job.Row(kNoLimit).Watcher();
  const Figures normal = job.Row(kNormal).Watcher();
  const Figures idle_poll = job.Row(kIdlePoll).Watcher();
  const Figures run_timer = job.Row(kRunDefault).Timer();
  const Figures floating_timer = job.Row(kFloating).Timer();
  const Figures free_timer = job.Row(kNoLimit).Timer();
  const Figures normal_timer = job.Row(kNormal).Timer();
  const bool haltpoll = cpuidle == "haltpoll";
  printf(
      "Limit held vs none (FIFO 5, floating): pong watcher p50 %s lower, ping "
      "timer p50 %s lower; goal >= 3x for the watcher where the cpuidle "
      "driver is haltpoll: %s\n",
      TimesLower(floating.p50_us, free.p50_us).c_str(),
      TimesLower(floating_timer.p50_us, free_timer.p50_us).c_str(),
      !haltpoll ? StrCat("no goal (driver ", cpuidle, ")").c_str()
                : Verdict(free.p50_us >= 3 * floating.p50_us));
  const double best = std::min(normal.p50_us, run.p50_us);
  printf(
      "run's default (FIFO 5, one CPU) vs the best of normal priority and one "
      "CPU: watcher p50 %s; goal <= 1.5x: %s\n",
      RatioText(run.p50_us, best).c_str(), Verdict(run.p50_us <= 1.5 * best));
  printf(
      "run's default vs normal priority: p50 watcher %s, timer %s of it; "
      "goal: never slower: %s\n",
      RatioText(run.p50_us, normal.p50_us).c_str(),
      RatioText(run_timer.p50_us, normal_timer.p50_us).c_str(),
      Verdict(run.p50_us <= normal.p50_us &&
              run_timer.p50_us <= normal_timer.p50_us));
  printf(
      "run's default ping timer vs cyclictest on the same CPU: p50 %s; goal "
      "<= 1.1x: %s\n",
      RatioText(run_timer.p50_us, job.cyclictest_on_run_cpu.p50_us).c_str(),
      Verdict(run_timer.p50_us <= 1.1 * job.cyclictest_on_run_cpu.p50_us));
  const MainJobRow& on_time = job.Row(kNoAnticipation);
  printf(
      "Timer anticipation (run's default) vs armed on time, both on one CPU: "
      "ping timer p50 %s lower (%s vs %s us), p99 %s vs %s us, for %s %% CPU "
      "(ping and pong) against %s %%; armed on time vs cyclictest on the "
      "same CPU: p50 %s (the loop's own path after the CPU woke)\n",
      TimesLower(run_timer.p50_us, on_time.Timer().p50_us).c_str(),
      ThreeDigits(run_timer.p50_us).c_str(),
      ThreeDigits(on_time.Timer().p50_us).c_str(),
      ThreeDigits(run_timer.p99_us).c_str(),
      ThreeDigits(on_time.Timer().p99_us).c_str(),
      ThreeDigits(job.Row(kRunDefault).CpuPercent()).c_str(),
      ThreeDigits(on_time.CpuPercent()).c_str(),
      RatioText(on_time.Timer().p50_us, job.cyclictest_on_run_cpu.p50_us)
          .c_str());
  printf(
      "Idle poller (opt-in): watcher p50 %s lower than floating, timer p50 %s "
      "lower, for %s %% CPU (floating: %s %%)\n",
      TimesLower(idle_poll.p50_us, floating.p50_us).c_str(),
      TimesLower(job.Row(kIdlePoll).Timer().p50_us, floating_timer.p50_us)
          .c_str(),
      ThreeDigits(job.Row(kIdlePoll).CpuPercent()).c_str(),
      ThreeDigits(job.Row(kFloating).CpuPercent()).c_str());
}

void WriteMainJob(const MainJob& job, JsonWriter* json) {
  json->BeginObject();
  json->Key("rounds").Number(job.rounds);
  json->Key("seconds_per_run").Number(job.duration.count() / 1000);
  json->Key("rows").BeginArray();
  for (const MainJobRow& r : job.rows) {
    json->BeginObject();
    json->Key("name").String(r.name);
    json->Key("held").String(r.held);
    json->Key("cpu_percent").Number(r.CpuPercent());
    json->Key("pong_watcher");
    WriteFigures(r.Watcher(), json);
    json->Key("ping_timer");
    WriteFigures(r.Timer(), json);
    json->EndObject();
  }
  json->EndArray();
  json->Key("cyclictest");
  WriteFigures(job.cyclictest, json);
  json->Key("run_cpu").Number(job.run_cpu);
  json->Key("cyclictest_on_run_cpu");
  WriteFigures(job.cyclictest_on_run_cpu, json);
  json->EndObject();
}

// Ends the bench, before anything runs, on a flag out of range or a
// baseline tool that is missing (every one named, with its package).
// Returns the scale section's options.
ScaleOptions CheckFlagsAndTools() {
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99,
                               " is not a SCHED_FIFO priority: give 1-99 (0 "
                               "runs everything at normal priority)"));
  ExitOnFlagError(
      CheckInRange("--interval_us", FLAGS_interval_us, 100, 1000000,
                   " is out of range: give 100-1000000 microseconds"));
  absl::StatusOr<ScaleOptions> scale = ScaleOptionsFromFlags(
      {.scale = FLAGS_scale,
       .scale_only = FLAGS_scale_only,
       .main_job_only = FLAGS_main_job_only,
       .timers = FLAGS_scale_timers,
       .watchers = FLAGS_scale_watchers,
       .seconds = FLAGS_scale_seconds,
       .p99_pairs = FLAGS_scale_p99_pairs,
       .long_run = FLAGS_long_run,
       .cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))});
  ExitOnFlagError(scale.status());
  std::vector<std::string> missing;
  for (std::string_view tool : {"cyclictest", "sigwaittest", "ptsematest"}) {
    if (access(RtTestsTool(tool).c_str(), X_OK) != 0) {
      missing.push_back(
          StrCat(RtTestsTool(tool), " (Debian package rt-tests)"));
    }
  }
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    missing.push_back("gnuplot (Debian package gnuplot-nox)");
  }
  if (!missing.empty()) {
    ExitForUserError(StrCat("missing ", StrJoin(missing, ", "),
                            "; tools/bench/latency.sh installs them"));
  }
  return *std::move(scale);
}

// The machine as the table's header and the JSON name it.
struct Machine {
  MachineInfo info;
  bool fifo = false;

  // What sysfs or /proc said, or "unknown".
  static std::string Said(const std::string& value) {
    return value.empty() ? "unknown" : value;
  }
  std::string cpu() const { return Said(info.cpu_model); }
  std::string clocksource() const { return Said(info.clocksource); }
  std::string cpuidle() const { return Said(info.cpuidle_driver); }
  std::string governor() const { return Said(info.cpuidle_governor); }
};

void PrintMachine(const Machine& m) {
  std::cout << "Machine: " << m.cpu() << ", " << m.info.hardware_threads
            << " cores, kernel " << m.info.kernel << ", clocksource "
            << m.clocksource() << ", SCHED_FIFO "
            << (m.fifo ? "granted"
                       : "NOT granted (figures are at normal priority)")
            << "\nIdle states: cpuidle driver " << m.cpuidle() << ", governor "
            << m.governor() << "\n\n"
            << std::flush;
}

// Everything measured after the main job, with the CPU wakeup limit held.
struct Rounds {
  int rounds = 0;
  timing::LatencyHistogram timer_histogram, watcher_histogram;
  timing::RunningStatistic timer_statistic, watcher_statistic;
  std::vector<Figures> cyclictest, sigwait_runs, ptsem_runs, like_sigwait_runs;
  std::vector<double> round_trip_on, round_trip_off;
  std::vector<double> round_trip_p50_on, round_trip_p50_off;
  std::vector<double> round_trip_no_paths, round_trip_p50_no_paths;
  std::vector<double> timer_ratios, watcher_ratios;
};

// `rounds` rounds, each running every measurement once, so drift on a
// shared machine hits ours and the baselines alike; the figures pool all
// rounds.
Rounds RunRounds(Bench* bench, int rounds) {
  Rounds r;
  r.rounds = rounds;
  const std::vector<std::string> rt_args = {StrCat("-p", FLAGS_priority),
                                            StrCat("-i", FLAGS_interval_us),
                                            StrCat("-l", bench->Loops()), "-q"};
  std::vector<std::string> sigwait_args = {"-f"};
  sigwait_args.insert(sigwait_args.end(), rt_args.begin(), rt_args.end());
  for (int round = 0; round < rounds; ++round) {
    std::cerr << "round " << round + 1 << "/" << rounds
              << ": ping/pong, cyclictest, ping/pong without reports, "
                 "ping/pong without path origins, sigwaittest -f, ptsematest, "
                 "aos driven like sigwaittest\n";
    Bench::PingPongRun run = bench->RunPingPong({});
    r.timer_histogram.Merge(run.timer);
    r.timer_statistic.Merge(run.timer_stat);
    r.watcher_histogram.Merge(run.watcher);
    r.watcher_statistic.Merge(run.watcher_stat);
    r.round_trip_on.push_back(run.round_trip_avg_us);
    r.round_trip_p50_on.push_back(run.round_trip_p50_us);
    r.cyclictest.push_back(bench->RunCyclictest());
    Bench::PingPongOptions without_reports;
    without_reports.reports = false;
    const Bench::PingPongRun unreported = bench->RunPingPong(without_reports);
    r.round_trip_off.push_back(unreported.round_trip_avg_us);
    r.round_trip_p50_off.push_back(unreported.round_trip_p50_us);
    Bench::PingPongOptions without_paths;
    without_paths.ping_args = {"--path_origins=false"};
    without_paths.pong_args = {"--path_origins=false"};
    const Bench::PingPongRun pathless = bench->RunPingPong(without_paths);
    r.round_trip_no_paths.push_back(pathless.round_trip_avg_us);
    r.round_trip_p50_no_paths.push_back(pathless.round_trip_p50_us);
    r.sigwait_runs.push_back(bench->RunRtTool("sigwaittest", sigwait_args));
    r.ptsem_runs.push_back(bench->RunRtTool("ptsematest", rt_args));
    r.like_sigwait_runs.push_back(bench->RunLoopLikeSigwaittest());
    r.timer_ratios.push_back(run.timer_stat.average() * 1e6 /
                             r.cyclictest.back().avg_us);
    r.watcher_ratios.push_back(run.watcher_stat.average() * 1e6 /
                               r.sigwait_runs.back().avg_us);
  }
  return r;
}

// The scale section as it ran (scale_section.h).
struct ScaleResults {
  bool ran = false;
  ScalePlan plan;
  std::vector<ScaleRow> rows;
  std::vector<ScaleGoal> goals;
  double seconds = NAN;
  // The p99 goal's loads again, back to back (pairs 0 where not run).
  TailPairs tail_pairs;
};

// The p99 goal's two loads in options.p99_pairs pairs of runs back to back
// (scale_section.h's TailPairs), ours only; none where the plan lacks
// either row.
TailPairs RunTailPairs(Bench* bench, const ScalePlan& plan,
                       const ScaleOptions& options) {
  TailPairs pairs;
  const std::optional<std::array<ScaleLoad, 2>> loads = TailPairLoads(plan);
  if (!loads.has_value() || options.p99_pairs == 0) return pairs;
  const ScaleLoad& one = (*loads)[0];
  const ScaleLoad& hundred = (*loads)[1];
  std::vector<Figures> one_runs, hundred_runs;
  for (int pair = 0; pair < options.p99_pairs; ++pair) {
    // A B B A: the 100 timers first in even pairs.
    const bool hundred_first = pair % 2 == 0;
    std::cerr << "scale p99 pair " << pair + 1 << "/" << options.p99_pairs
              << ": " << (hundred_first ? hundred : one).Name() << ", then "
              << (hundred_first ? one : hundred).Name() << "\n";
    for (const bool run_hundred : {hundred_first, !hundred_first}) {
      const ScaleLoad& load = run_hundred ? hundred : one;
      const Figures latency =
          bench->RunScaleOurs(load, options.seconds).side.latency;
      (run_hundred ? pairs.hundred_p99_us : pairs.one_p99_us)
          .push_back(latency.p99_us);
      (run_hundred ? hundred_runs : one_runs).push_back(latency);
    }
  }
  pairs.pairs = options.p99_pairs;
  pairs.one = Merge(one.Name(), one_runs);
  pairs.hundred = Merge(hundred.Name(), hundred_runs);
  return pairs;
}

// Each row of `options` with our loop and then cyclictest -t N, or the
// other way round (A B B A over the rows), with the CPU wakeup limit held
// by the caller; then the p99 goal's pairs (RunTailPairs).
ScaleResults RunScaleSection(Bench* bench, const ScaleOptions& options) {
  ScaleResults scale;
  scale.ran = true;
  scale.seconds = options.seconds;
  scale.plan = PlanScaleRows(options);
  const int total = static_cast<int>(scale.plan.rows.size());
  for (int i = 0; i < total; ++i) {
    const ScaleLoad& load = scale.plan.rows[i];
    const bool cyclictest_first = AbbaSecondArm(i);
    std::cerr << "scale " << i + 1 << "/" << total << ": " << load.Name()
              << (cyclictest_first ? ": cyclictest -t N, then aos\n"
                                   : ": aos, then cyclictest -t N\n");
    ScaleRow row{.load = load};
    if (cyclictest_first) {
      row.cyclictest = bench->RunScaleCyclictest(load, options.seconds);
    }
    const Bench::ScaleOurs ours = bench->RunScaleOurs(load, options.seconds);
    row.ours = ours.side;
    row.sender_cpu_percent = ours.sender_cpu_percent;
    if (!cyclictest_first) {
      row.cyclictest = bench->RunScaleCyclictest(load, options.seconds);
    }
    scale.rows.push_back(std::move(row));
  }
  scale.tail_pairs = RunTailPairs(bench, scale.plan, options);
  scale.goals = EvaluateScaleGoals(scale.rows, scale.tail_pairs);
  return scale;
}

void PrintScale(const ScaleResults& scale) {
  std::cout << ScaleTable(scale.plan, scale.rows, scale.goals, scale.seconds,
                          FLAGS_priority)
            << std::flush;
}

// The section's keys of the JSON file: "scale_seconds_per_run", "scale"
// (the rows), "scale_skipped", "scale_goals" and "scale_p99_pairs".
void WriteScale(const ScaleResults& scale, JsonWriter* json) {
  json->Key("scale_seconds_per_run").Number(scale.seconds);
  json->Key("scale");
  WriteScaleRows(scale.rows, FLAGS_priority, json);
  json->Key("scale_skipped");
  WriteScaleSkipped(scale.plan, json);
  json->Key("scale_goals");
  WriteScaleGoals(scale.goals, json);
  json->Key("scale_p99_pairs");
  WriteTailPairs(scale.tail_pairs, json);
}

// What the tables and the JSON show of the rounds, scale and
// microbenchmarks.
struct Results {
  Figures timer, watcher, cyclic, sigwait, ptsem, like_sigwait;
  std::vector<double> timer_ratios, watcher_ratios;
  // Round trips' means: with reports (on), without (off), without path
  // origins.
  double on = NAN, off = NAN, p50_on = NAN, p50_off = NAN;
  double no_paths = NAN, p50_no_paths = NAN;
  ScaleResults scale;
  double record_ns = NAN, clock_ns = NAN, report_ns = NAN;
};

Results Summarize(const Rounds& r) {
  Results results;
  results.timer =
      FromHistogram("aos ping timer", r.timer_histogram, r.timer_statistic);
  results.watcher = FromHistogram("aos pong watcher", r.watcher_histogram,
                                  r.watcher_statistic);
  results.cyclic = Merge("cyclictest", r.cyclictest);
  results.sigwait = Merge("sigwaittest", r.sigwait_runs);
  results.ptsem = Merge("ptsematest", r.ptsem_runs);
  results.like_sigwait = Merge("aos, sigwaittest-driven", r.like_sigwait_runs);
  results.timer_ratios = r.timer_ratios;
  results.watcher_ratios = r.watcher_ratios;
  results.on = Mean(r.round_trip_on);
  results.off = Mean(r.round_trip_off);
  results.p50_on = Mean(r.round_trip_p50_on);
  results.p50_off = Mean(r.round_trip_p50_off);
  results.no_paths = Mean(r.round_trip_no_paths);
  results.p50_no_paths = Mean(r.round_trip_p50_no_paths);
  return results;
}

// The instrumentation's microbenchmarks, into `results`.
void RunMicrobenchmarks(Bench* bench, Results* results) {
  const std::vector<double> timing_ns = bench->Microbenchmarks(
      "tools/bench/timing_benchmark", {"BM_RecordBoth", "BM_SteadyClockNow"});
  results->record_ns = timing_ns[0];
  results->clock_ns = timing_ns[1];
  results->report_ns = bench->Microbenchmarks(
      "tools/bench/timing_report_benchmark", {"BM_BuildReport50Entries"})[0];
}

void PrintResults(const Results& r) {
  auto row = [](const Figures& f, const Figures* base) {
    printf("  %-26s %8s %8s %8s %8s %8s %8s", f.name.c_str(),
           ThreeDigits(f.min_us).c_str(), ThreeDigits(f.avg_us).c_str(),
           ThreeDigits(f.p50_us).c_str(), ThreeDigits(f.p99_us).c_str(),
           ThreeDigits(f.p999_us).c_str(), ThreeDigits(f.max_us).c_str());
    if (base != nullptr) {
      printf("   avg %s, p99 %s", RatioText(f.avg_us, base->avg_us).c_str(),
             RatioText(f.p99_us, base->p99_us).c_str());
    }
    printf("\n");
  };
  printf(
      "Wakeup latency (us)             %8s %8s %8s %8s %8s %8s   ours / "
      "baseline\n",
      "min", "avg", "p50", "p99", "p99.9", "max");
  printf("Timer:\n");
  row(r.timer, &r.cyclic);
  row(r.cyclic, nullptr);
  printf("Cross-process:\n");
  row(r.watcher, &r.sigwait);
  row(r.sigwait, nullptr);
  row(r.ptsem, nullptr);
  row(r.like_sigwait, &r.sigwait);
  auto ratios = [](const std::vector<double>& values) {
    std::string text;
    for (double value : values) {
      char number[16];
      snprintf(number, sizeof(number), " %.2f", value);
      text += number;
    }
    return text;
  };
  printf("Avg ratio in each round: timer%s; watcher%s\n",
         ratios(r.timer_ratios).c_str(), ratios(r.watcher_ratios).c_str());
  printf(
      "\nInstrumentation: ping round trip avg %s us with timing reports, %s us "
      "without: %s (median %s vs %s us: %s)\n",
      ThreeDigits(r.on).c_str(), ThreeDigits(r.off).c_str(),
      RatioText(r.on, r.off).c_str(), ThreeDigits(r.p50_on).c_str(),
      ThreeDigits(r.p50_off).c_str(), RatioText(r.p50_on, r.p50_off).c_str());
  printf(
      "Path latency: ping round trip avg %s us with path origins, %s us "
      "without: %s (median %s vs %s us: %s)\n",
      ThreeDigits(r.on).c_str(), ThreeDigits(r.no_paths).c_str(),
      RatioText(r.on, r.no_paths).c_str(), ThreeDigits(r.p50_on).c_str(),
      ThreeDigits(r.p50_no_paths).c_str(),
      RatioText(r.p50_on, r.p50_no_paths).c_str());
  printf(
      "  recording one sample %s ns (one clock read %s ns); building a "
      "51-entry report %s us\n",
      ThreeDigits(r.record_ns).c_str(), ThreeDigits(r.clock_ns).c_str(),
      ThreeDigits(r.report_ns / 1000).c_str());
  printf(
      "\nGoals: timer avg <= 1.10x and p99 <= 1.20x cyclictest: %s, %s; "
      "watcher avg <= 1.10x "
      "sigwaittest -f: %s; reports on/off round trip within 2%%: %s; path "
      "origins on/off round trip within 2%%: %s\n",
      r.timer.avg_us <= 1.10 * r.cyclic.avg_us ? "met" : "MISSED",
      r.timer.p99_us <= 1.20 * r.cyclic.p99_us ? "met" : "MISSED",
      r.watcher.avg_us <= 1.10 * r.sigwait.avg_us ? "met" : "MISSED",
      std::abs(r.on / r.off - 1) <= 0.02 ? "met" : "MISSED",
      std::abs(r.on / r.no_paths - 1) <= 0.02 ? "met" : "MISSED");
  if (r.scale.ran) {
    printf("\n");
    fflush(stdout);
    PrintScale(r.scale);
  }
}

// The "machine" object of the JSON file.
void WriteMachine(const Machine& m, bool limit_held, JsonWriter* json) {
  json->Key("machine").BeginObject();
  json->Key("cpu").String(m.cpu());
  json->Key("cores").Number(m.info.hardware_threads);
  json->Key("kernel").String(m.info.kernel);
  json->Key("clocksource").String(m.clocksource());
  json->Key("sched_fifo").Bool(m.fifo);
  json->Key("cpuidle_driver").String(m.cpuidle());
  json->Key("cpuidle_governor").String(m.governor());
  json->Key("cpu_dma_latency_held_at_zero").Bool(limit_held);
  json->EndObject();
}

// Every figure, as the JSON file holds it.
std::string ResultsJson(const Machine& m, bool limit_held, int rounds,
                        int64_t cycles_per_run, const MainJob& main_job,
                        const Results& r) {
  JsonWriter json(2);
  json.BeginObject();
  WriteMachine(m, limit_held, &json);
  json.Key("priority").Number(FLAGS_priority);
  json.Key("interval_us").Number(FLAGS_interval_us);
  json.Key("rounds").Number(rounds);
  json.Key("cycles_per_run").Number(cycles_per_run);
  json.Key("avg_ratio_per_round").BeginObject();
  for (const auto& [key, values] :
       {std::pair{"timer", &r.timer_ratios}, {"watcher", &r.watcher_ratios}}) {
    json.Key(key).BeginArray();
    for (double value : *values) json.Number(value);
    json.EndArray();
  }
  json.EndObject();
  auto figures = [&](std::string_view key, const Figures& f) {
    json.Key(key);
    WriteFigures(f, &json);
  };
  json.Key("timer").BeginObject();
  figures("aos", r.timer);
  figures("cyclictest", r.cyclic);
  json.EndObject();
  json.Key("cross_process").BeginObject();
  figures("aos", r.watcher);
  figures("sigwaittest_f", r.sigwait);
  figures("ptsematest", r.ptsem);
  figures("aos_driven_like_sigwaittest", r.like_sigwait);
  json.EndObject();
  json.Key("main_job");
  WriteMainJob(main_job, &json);
  json.Key("instrumentation").BeginObject();
  json.Key("round_trip_reports_on_us").Number(r.on);
  json.Key("round_trip_reports_off_us").Number(r.off);
  json.Key("round_trip_p50_reports_on_us").Number(r.p50_on);
  json.Key("round_trip_p50_reports_off_us").Number(r.p50_off);
  json.Key("round_trip_path_origins_off_us").Number(r.no_paths);
  json.Key("round_trip_p50_path_origins_off_us").Number(r.p50_no_paths);
  json.Key("record_sample_ns").Number(r.record_ns);
  json.Key("clock_read_ns").Number(r.clock_ns);
  json.Key("build_report_ns").Number(r.report_ns);
  json.EndObject();
  if (r.scale.ran) WriteScale(r.scale, &json);
  json.EndObject();
  return json.Text();
}

// Holds /dev/cpu_dma_latency at 0 us for what follows and prints, after
// `heading`, whether it was granted (without it, cyclictest's own hold
// during its runs favours it where CPUs have deep idle states).
absl::StatusOr<std::unique_ptr<CpuLatencyLimit>> HoldCpuLatencyLimitSaying(
    std::string_view heading) {
  auto dma_latency = CpuLatencyLimit::HoldForAllCpus(0);
  std::cout << heading << ": /dev/cpu_dma_latency "
            << (dma_latency.ok()
                    ? "held at 0 us for every measurement"
                    : StrCat("NOT held (", dma_latency.status().message(),
                             "): cyclictest holds it during its own runs "
                             "only, which favours it where CPUs have deep "
                             "idle states"));
  return dma_latency;
}

// --scale_only: the scale section alone, and a JSON file of the machine
// and the section.
int RunScaleOnly(Bench* bench, const Machine& machine,
                 const ScaleOptions& options, FlagOutputFile* json_file) {
  // Held as for the rest of a whole run.
  auto dma_latency = HoldCpuLatencyLimitSaying("Scale section");
  std::cout << "\n" << std::flush;
  const ScaleResults scale = RunScaleSection(bench, options);
  bench->CleanShm();
  std::cout << "\n";
  PrintScale(scale);
  JsonWriter json(2);
  json.BeginObject();
  WriteMachine(machine, dma_latency.ok(), &json);
  json.Key("priority").Number(FLAGS_priority);
  WriteScale(scale, &json);
  json.EndObject();
  json_file->WriteAndClose(json.Text());
  std::cout << "\nWrote " << FLAGS_json << "\n";
  return 0;
}

// What the bench runs and reads from --bin_dir (tools/bench/latency.sh
// builds them): one missing is one line naming it, and exit 1.
void CheckBuiltFiles() {
  std::vector<std::string> files;
  for (const char* file :
       {"examples/ping", "examples/pong", "examples/pingpong_config.json",
        "aos/tools/aos_timing_report_streamer", "tools/bench/scale_app",
        "tools/bench/scale_config.json",
        "tools/bench/scale_watchers_config.json",
        "tools/bench/timing_benchmark", "tools/bench/timing_report_benchmark",
        "tools/bench/shm_wakeup_benchmark"}) {
    files.push_back(StrCat(FLAGS_bin_dir, "/", file));
  }
  const std::vector<std::string> missing = MissingFiles(files);
  if (!missing.empty()) {
    ExitForUserError(StrCat("--bin_dir=", FLAGS_bin_dir, ": no ", missing[0],
                            " (tools/bench/latency.sh builds what the bench "
                            "runs)"));
  }
}

int Main() {
  const ScaleOptions scale_options = CheckFlagsAndTools();
  CheckBuiltFiles();
  // Opened now, so that a path it cannot write fails before measuring.
  FlagOutputFile json_file("--json", FLAGS_main_job_only ? "" : FLAGS_json);
  Bench bench;
  if (FLAGS_scale && !FLAGS_main_job_only) {
    const auto [watchers, senders] = bench.ScaleConfigCapacity();
    ExitOnFlagError(CheckScaleCapacity(
        scale_options, watchers, senders,
        bench.Binary("tools/bench/scale_watchers_config.json")));
  }
  const int rounds = FLAGS_long_run ? 6 : 4;
  bench.SetDuration(FLAGS_long_run ? seconds(20) : milliseconds(2500));
  const Machine machine{.info = ReadMachineInfo(), .fifo = SchedFifoGranted()};
  PrintMachine(machine);
  if (FLAGS_scale_only) {
    return RunScaleOnly(&bench, machine, scale_options, &json_file);
  }

  const MainJob main_job = RunMainJob(&bench);
  PrintMainJob(main_job, machine.cpuidle());
  if (FLAGS_main_job_only) {
    bench.CleanShm();
    return 0;
  }

  // From here on, every measurement runs with the limit held, ours and the
  // baselines alike (cyclictest holds it itself, the others do not).
  std::cout << "\n";
  auto dma_latency = HoldCpuLatencyLimitSaying("The rest");
  std::cout << "\nRuns: " << rounds << " rounds of " << bench.Loops()
            << " cycles of " << FLAGS_interval_us << " us at priority "
            << FLAGS_priority
            << ", each round running every measurement in turn\n\n";
  Results results = Summarize(RunRounds(&bench, rounds));
  RunMicrobenchmarks(&bench, &results);
  if (FLAGS_scale) results.scale = RunScaleSection(&bench, scale_options);
  bench.CleanShm();

  PrintResults(results);
  json_file.WriteAndClose(ResultsJson(machine, dma_latency.ok(), rounds,
                                      bench.Loops(), main_job, results));
  WritePlot(results.timer, results.cyclic);
  std::cout << "\nWrote " << FLAGS_json << " and " << FLAGS_plot << "\n";
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: latency_bench [--long_run] [--main_job_only | --scale_only | "
      "--noscale] [--json=FILE] [--plot=FILE.png]\n"
      "Run through tools/bench/latency.sh. docs/benchmarks.md.");
  return aos::bench::Main();
}
