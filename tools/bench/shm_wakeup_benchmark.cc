// Cross-process wakeup latency: a message sent by one process's ShmEventLoop
// until the watcher handler starts in another, side by side in the same run
// with rt-tests' sigwaittest -f (signals between forked processes) and
// ptsematest (mutexes between threads) at the same priority, interval and
// loop count. Prints one table; the goal is an average within 1.10x of
// sigwaittest -f.
//
//   bazel run //tools/bench:shm_wakeup_benchmark -- --priority=80 --loops=10000
//
// Without realtime permission, use --priority=0 (the figures then measure
// the normal scheduler, for every tool alike).
//
// Two more rows tell the event loop's cost apart from the platform's:
// - the bare mechanism: tgkill to a thread blocked in epoll_wait on a
//   signalfd, no queue and no event loop, driven by a timerfd like the
//   first row (latency: the receiver's clock when epoll_wait returns minus
//   the sender's just before tgkill);
// - the event loop driven the way sigwaittest drives signals: the receiver
//   replies one interval after each message, and the sender sends the next
//   message as soon as the reply arrives. The receiver then went idle only
//   microseconds before each measured wakeup, whereas with a timer it has
//   been idle for the whole interval (docs/ipc.md says why that matters).
// --cpu pins every measured process to one CPU, and passes -a to the
// rt-tests tools so that they do the same.
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <new>
#include <optional>
#include <regex>
#include <string>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/util/str_cat.h"
#include "examples/ping_generated.h"

DEFINE_int32(loops, 10000, "Messages (and tool cycles) to measure.");
DEFINE_int32(interval_us, 1000, "Microseconds between sends.");
DEFINE_int32(priority, 0,
             "SCHED_FIFO priority of both sides (0 = normal scheduling).");
DEFINE_int32(cpu, -1,
             "Pin every measured process to this CPU (and run the rt-tests "
             "tools with -a CPU); -1 leaves placement to the scheduler.");
DEFINE_bool(run_timer_driven, true,
            "Measure the event loop with a timer-driven sender (first row).");
DEFINE_bool(run_tools, true, "Also run sigwaittest -f and ptsematest.");
DEFINE_bool(run_floor, true,
            "Also measure the bare tgkill -> signalfd + epoll mechanism.");
DEFINE_bool(run_ping_pong, true,
            "Also measure the event loop driven like sigwaittest (ping-pong).");

namespace aos {
namespace {

using std::chrono::microseconds;

struct Figures {
  std::string what;
  double min_us = 0;
  double avg_us = 0;
  std::optional<double> p99_us;
  double max_us = 0;
  int64_t count = 0;
};

// What the receiving process reports back through a pipe.
struct ReceiverResult {
  int64_t count;
  double average_s;
  int64_t min_ns;
  int64_t p99_ns;
  int64_t max_ns;
};

// Latencies measured in the receiving process.
class Samples {
 public:
  void Add(monotonic_clock::duration latency) {
    histogram_.Record(latency.count());
    statistic_.Add(DurationInSeconds(latency));
  }

  // Sends the summary through `fd` (to Receive()).
  void Report(int fd) const {
    const ReceiverResult result{
        static_cast<int64_t>(histogram_.count()), statistic_.average(),
        histogram_.min_ns(), histogram_.PercentileNs(99), histogram_.max_ns()};
    CHECK_EQ(write(fd, &result, sizeof(result)),
             static_cast<ssize_t>(sizeof(result)));
  }

  static Figures Receive(std::string what, int fd) {
    ReceiverResult result;
    CHECK_EQ(read(fd, &result, sizeof(result)),
             static_cast<ssize_t>(sizeof(result)))
        << "the receiver did not report";
    return Figures{std::move(what),        result.min_ns / 1e3,
                   result.average_s * 1e6, result.p99_ns / 1e3,
                   result.max_ns / 1e3,    result.count};
  }

 private:
  timing::LatencyHistogram histogram_;
  timing::RunningStatistic statistic_;
};

void ApplyRealtime(EventLoop* loop) {
  if (FLAGS_priority > 0) loop->SetRuntimeRealtimePriority(FLAGS_priority);
  if (FLAGS_cpu >= 0) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(FLAGS_cpu, &cpus);
    loop->SetRuntimeAffinity(cpus);
  }
}

constexpr std::string_view kConfig = R"({ "channels": [
  { "name": "/bench", "type": "aos.examples.Ping", "frequency": 100000,
    "max_size": 64, "channel_storage_duration": 100000000 },
  { "name": "/bench_reply", "type": "aos.examples.Ping", "frequency": 100000,
    "max_size": 64, "channel_storage_duration": 100000000 } ] })";

// How the sender is driven.
enum class Pattern {
  // A message every interval, from a timer.
  kTimer,
  // The receiver replies an interval after each message; the sender sends
  // the next one when the reply arrives (sigwaittest's pattern).
  kPingPong,
};

[[noreturn]] void RunReceiver(const Configuration* config, Pattern pattern,
                              int ready_fd, int result_fd) {
  ShmEventLoop loop(config, "receiver");
  loop.SkipTimingReport();
  ApplyRealtime(&loop);
  Samples samples;
  Sender<examples::Ping> reply =
      loop.MakeSender<examples::Ping>("/bench_reply");
  int value = 0;
  TimerHandler* reply_timer = loop.AddTimer([&]() {
    auto builder = reply.MakeBuilder();
    examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
    ping.add_value(value);
    builder.CheckOk(builder.Send(ping.Finish()));
  });
  loop.MakeWatcher("/bench", [&](const examples::Ping& ping) {
    samples.Add(loop.monotonic_now() - loop.context().monotonic_event_time);
    value = ping.value();
    if (value >= FLAGS_loops) {
      loop.Exit();
    } else if (pattern == Pattern::kPingPong) {
      reply_timer->Schedule(loop.monotonic_now() +
                            microseconds(FLAGS_interval_us));
    }
  });
  loop.OnRun([&]() {
    const char ready = 'R';
    CHECK_EQ(write(ready_fd, &ready, 1), 1);
  });
  loop.Run();
  samples.Report(result_fd);
  _exit(0);
}

Figures MeasureAos(const Configuration* config, Pattern pattern) {
  int ready[2];
  int results[2];
  PCHECK(pipe(ready) == 0);
  PCHECK(pipe(results) == 0);
  const pid_t child = fork();
  PCHECK(child >= 0);
  if (child == 0) RunReceiver(config, pattern, ready[1], results[1]);

  char byte;
  CHECK_EQ(read(ready[0], &byte, 1), 1) << "the receiver did not start";
  {
    ShmEventLoop loop(config, "sender");
    loop.SkipTimingReport();
    ApplyRealtime(&loop);
    Sender<examples::Ping> sender = loop.MakeSender<examples::Ping>("/bench");
    int value = 0;
    auto send = [&]() {
      auto builder = sender.MakeBuilder();
      examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
      ping.add_value(++value);
      builder.CheckOk(builder.Send(ping.Finish()));
      if (value >= FLAGS_loops) loop.Exit();
    };
    TimerHandler* timer = loop.AddTimer(send);
    if (pattern == Pattern::kPingPong) {
      loop.MakeWatcher("/bench_reply", [&](const examples::Ping&) { send(); });
    }
    loop.OnRun([&]() {
      timer->Schedule(loop.monotonic_now() + microseconds(FLAGS_interval_us),
                      pattern == Pattern::kTimer
                          ? microseconds(FLAGS_interval_us)
                          : microseconds(0));
    });
    loop.Run();
  }
  int status;
  waitpid(child, &status, 0);
  return Samples::Receive(pattern == Pattern::kTimer
                              ? "aos ShmEventLoop (send -> watcher, processes)"
                              : "aos ShmEventLoop, sigwaittest's ping-pong",
                          results[0]);
}

void PinAndRaise() {
  if (FLAGS_cpu >= 0) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(FLAGS_cpu, &cpus);
    PCHECK(sched_setaffinity(0, sizeof(cpus), &cpus) == 0);
  }
  if (FLAGS_priority > 0) {
    struct sched_param param = {};
    param.sched_priority = FLAGS_priority;
    PCHECK(sched_setscheduler(0, SCHED_FIFO, &param) == 0);
    PCHECK(mlockall(MCL_CURRENT | MCL_FUTURE) == 0);
  }
}

// The mechanism alone: a timerfd wakes the sender through epoll every
// interval; it reads the clock and tgkills the receiver, which waits in
// epoll_wait on a signalfd, reads the clock when it returns, then drains
// the signalfd.
Figures MeasureFloor() {
  struct Shared {
    std::atomic<pid_t> receiver_tid{0};
    std::atomic<int64_t> sent_ns{0};
  };
  void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  PCHECK(memory != MAP_FAILED);
  Shared* shared = new (memory) Shared;
  int results[2];
  PCHECK(pipe(results) == 0);
  const int signal = ipc_lib::WakeupSignal();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, signal);
  sigset_t old_mask;
  PCHECK(pthread_sigmask(SIG_BLOCK, &signals, &old_mask) == 0);
  const pid_t child = fork();
  PCHECK(child >= 0);
  if (child == 0) {
    PinAndRaise();
    const int signal_fd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
    PCHECK(signal_fd >= 0);
    const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    PCHECK(epoll_fd >= 0);
    struct epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = signal_fd;
    PCHECK(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, signal_fd, &event) == 0);
    shared->receiver_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    Samples samples;
    // Signals, not wakeups: two sent before one wakeup are read together
    // (the first one's latency is then not recorded).
    int received = 0;
    while (received < FLAGS_loops) {
      if (epoll_wait(epoll_fd, &event, 1, -1) != 1) continue;
      const monotonic_clock::time_point now = monotonic_clock::now();
      samples.Add(now - monotonic_clock::time_point(
                            monotonic_clock::duration(shared->sent_ns.load())));
      struct signalfd_siginfo info;
      while (read(signal_fd, &info, sizeof(info)) == sizeof(info)) {
        ++received;
      }
    }
    samples.Report(results[1]);
    _exit(0);
  }
  while (shared->receiver_tid.load() == 0) usleep(1000);
  {
    // Wait until the receiver blocks in epoll_wait.
    usleep(10000);
    PinAndRaise();
    const int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    PCHECK(timer_fd >= 0);
    const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    PCHECK(epoll_fd >= 0);
    struct epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = timer_fd;
    PCHECK(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &event) == 0);
    struct itimerspec spec = {};
    spec.it_value.tv_nsec = FLAGS_interval_us * 1000L;
    spec.it_interval = spec.it_value;
    PCHECK(timerfd_settime(timer_fd, 0, &spec, nullptr) == 0);
    const pid_t tid = shared->receiver_tid.load();
    for (int i = 0; i < FLAGS_loops; ++i) {
      PCHECK(epoll_wait(epoll_fd, &event, 1, -1) == 1);
      uint64_t expirations;
      PCHECK(read(timer_fd, &expirations, sizeof(expirations)) > 0);
      shared->sent_ns.store(monotonic_clock::now().time_since_epoch().count());
      PCHECK(tgkill(child, tid, signal) == 0);
    }
    close(epoll_fd);
    close(timer_fd);
    if (FLAGS_priority > 0) {
      struct sched_param param = {};
      sched_setscheduler(0, SCHED_OTHER, &param);
    }
  }
  int status;
  waitpid(child, &status, 0);
  PCHECK(pthread_sigmask(SIG_SETMASK, &old_mask, nullptr) == 0);
  munmap(memory, sizeof(Shared));
  return Samples::Receive("bare tgkill -> signalfd + epoll, timer-driven",
                          results[0]);
}

// Runs an rt-tests tool and reads its "Min x, Cur y, Avg z, Max w" line.
std::optional<Figures> RunTool(const std::string& what,
                               const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  const std::regex line(
      R"(Min\s+(\d+),\s*Cur\s+(\d+),\s*Avg\s+(\d+),\s*Max\s+(\d+))");
  std::smatch match;
  if (status != 0 || !std::regex_search(output, match, line)) {
    fprintf(stderr, "%s failed or printed no summary:\n%s\n", command.c_str(),
            output.c_str());
    return std::nullopt;
  }
  return Figures{what,         std::stod(match[1]), std::stod(match[3]),
                 std::nullopt, std::stod(match[4]), FLAGS_loops};
}

int Main() {
  auto config = configuration::ReadConfigFromJson(kConfig);
  CHECK(config.ok()) << config.status().message();
  char base[] = "/dev/shm/aos_wakeup_benchmark_XXXXXX";
  PCHECK(mkdtemp(base) != nullptr);
  FLAGS_shm_base = base;

  std::vector<Figures> figures;
  if (FLAGS_run_timer_driven) {
    figures.push_back(MeasureAos(&config->message(), Pattern::kTimer));
  }
  if (FLAGS_run_floor) figures.push_back(MeasureFloor());
  if (FLAGS_run_ping_pong) {
    figures.push_back(MeasureAos(&config->message(), Pattern::kPingPong));
  }
  std::filesystem::remove_all(base);
  if (FLAGS_run_tools) {
    std::string common = StrCat(" -p ", FLAGS_priority, " -i ",
                                FLAGS_interval_us, " -l ", FLAGS_loops, " -q");
    if (FLAGS_cpu >= 0) common += StrCat(" -a ", FLAGS_cpu);
    for (const auto& [what, command] :
         std::vector<std::pair<std::string, std::string>>{
             {"sigwaittest -f (signal, processes)", "sigwaittest -f" + common},
             {"ptsematest (mutex, threads)", "ptsematest" + common}}) {
      if (auto tool = RunTool(what, command)) figures.push_back(*tool);
    }
  }

  printf(
      "\nWakeup latency, %d messages every %d us, SCHED_FIFO priority %d "
      "(0 = normal), %s, us:\n\n",
      FLAGS_loops, FLAGS_interval_us, FLAGS_priority,
      FLAGS_cpu >= 0 ? StrCat("all on CPU ", FLAGS_cpu).c_str()
                     : "placed by the scheduler");
  printf("%-48s %8s %8s %8s %8s %12s\n", "", "min", "avg", "p99", "max",
         "avg/sigwait");
  const Figures* sigwait = nullptr;
  for (const Figures& f : figures) {
    if (f.what.starts_with("sigwaittest")) sigwait = &f;
  }
  for (const Figures& f : figures) {
    const std::string p99 =
        f.p99_us.has_value()
            ? StrCat(static_cast<int64_t>(*f.p99_us * 10) / 10.0)
            : "-";
    std::string ratio = "-";
    if (sigwait != nullptr && sigwait->avg_us > 0) {
      char text[32];
      snprintf(text, sizeof(text), "%.2fx", f.avg_us / sigwait->avg_us);
      ratio = text;
    }
    printf("%-48s %8.2f %8.2f %8s %8.1f %12s\n", f.what.c_str(), f.min_us,
           f.avg_us, p99.c_str(), f.max_us, ratio.c_str());
  }
  printf(
      "\n(rt-tests print whole microseconds; aos figures come from its "
      "own histogram, p99 within 1.6%%.)\n");
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: shm_wakeup_benchmark [--priority=N] [--loops=N] "
                  "[--interval_us=N] [--cpu=N]\nCross-process wakeup latency "
                  "of ShmEventLoop beside "
                  "sigwaittest -f and ptsematest, measured in the same run.");
  return aos::Main();
}
