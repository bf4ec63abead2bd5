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
// rt-tests tools so that they do the same. --json=FILE also writes every row
// as JSON (tools/bench/latency.sh reads the ping-pong row from it).
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
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <string>
#include <type_traits>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"
#include "examples/ping_generated.h"
#include "tools/bench/bench_figures.h"
#include "tools/bench/rt_tests.h"

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
DEFINE_string(json, "",
              "Also write every row to this file as JSON: the settings and "
              "\"rows\", an object of figures keyed timer_driven, floor, "
              "ping_pong, sigwaittest_f, ptsematest (those that ran).");

namespace aos {
namespace {

using bench::Figures;
using std::chrono::microseconds;

// Latencies measured in the receiving process, handed to the parent through
// a pipe as they are in memory (the child is a fork of the same binary).
class Samples {
 public:
  void Add(monotonic_clock::duration latency) {
    histogram_.Record(latency.count());
    statistic_.Add(DurationInSeconds(latency));
  }

  // Sends the samples through `fd` (to Receive()).
  void Report(int fd) const {
    const char* data = reinterpret_cast<const char*>(this);
    size_t left = sizeof(*this);
    while (left > 0) {
      const ssize_t written = write(fd, data, left);
      if (written < 0 && errno == EINTR) continue;
      PCHECK(written > 0) << "reporting to the parent";
      data += written;
      left -= static_cast<size_t>(written);
    }
  }

  static Figures Receive(std::string name, int fd) {
    Samples samples;
    char* data = reinterpret_cast<char*>(&samples);
    size_t left = sizeof(samples);
    while (left > 0) {
      const ssize_t got = read(fd, data, left);
      if (got < 0 && errno == EINTR) continue;
      CHECK_GT(got, 0) << "the receiver did not report";
      data += got;
      left -= static_cast<size_t>(got);
    }
    return bench::FromHistogram(std::move(name), samples.histogram_,
                                samples.statistic_);
  }

 private:
  timing::LatencyHistogram histogram_;
  timing::RunningStatistic statistic_;
};
static_assert(std::is_trivially_copyable_v<timing::LatencyHistogram> &&
                  std::is_trivially_copyable_v<timing::RunningStatistic>,
              "Samples are sent through a pipe byte by byte");

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

// A pipe from a forked receiver to the parent. The parent closes its copy
// of `write` once the child runs, so a child that dies early makes the
// parent's read end (EOF) instead of wait for ever.
struct Pipe {
  ScopedFd read;
  ScopedFd write;
};
Pipe MakePipe() {
  int fds[2];
  PCHECK(pipe(fds) == 0);
  return {ScopedFd(fds[0]), ScopedFd(fds[1])};
}

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
  Pipe ready = MakePipe();
  Pipe results = MakePipe();
  const pid_t child = fork();
  PCHECK(child >= 0);
  if (child == 0) {
    RunReceiver(config, pattern, ready.write.get(), results.write.get());
  }
  ready.write.reset();
  results.write.reset();

  char byte;
  CHECK_EQ(read(ready.read.get(), &byte, 1), 1) << "the receiver did not start";
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
                          results.read.get());
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

// Whether thread `tid` of process `pid` sleeps in the kernel (state S, as
// in a blocking epoll_wait), from /proc/PID/task/TID/stat.
bool Asleep(pid_t pid, pid_t tid) {
  std::ifstream in(StrCat("/proc/", pid, "/task/", tid, "/stat"));
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  // The state follows the command name, which is in parentheses.
  const size_t name_end = text.rfind(')');
  return name_end != std::string::npos && name_end + 2 < text.size() &&
         text[name_end + 2] == 'S';
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
  Pipe results = MakePipe();
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
    const ScopedFd signal_fd(
        signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
    PCHECK(signal_fd.valid());
    const ScopedFd epoll_fd(epoll_create1(EPOLL_CLOEXEC));
    PCHECK(epoll_fd.valid());
    struct epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = signal_fd.get();
    PCHECK(epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, signal_fd.get(), &event) ==
           0);
    shared->receiver_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    Samples samples;
    // Signals, not wakeups: two sent before one wakeup are read together
    // (the first one's latency is then not recorded).
    int received = 0;
    while (received < FLAGS_loops) {
      if (epoll_wait(epoll_fd.get(), &event, 1, -1) != 1) continue;
      const monotonic_clock::time_point now = monotonic_clock::now();
      samples.Add(now - monotonic_clock::time_point(
                            monotonic_clock::duration(shared->sent_ns.load())));
      struct signalfd_siginfo info;
      while (read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        ++received;
      }
    }
    samples.Report(results.write.get());
    _exit(0);
  }
  results.write.reset();
  while (shared->receiver_tid.load() == 0) usleep(1000);
  {
    // Until the receiver blocks in epoll_wait, where the first signal is to
    // find it.
    while (!Asleep(child, shared->receiver_tid.load())) {
      CHECK_EQ(waitpid(child, nullptr, WNOHANG), 0)
          << "the receiver exited before it waited for a signal";
      usleep(100);
    }
    PinAndRaise();
    const ScopedFd timer_fd(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    PCHECK(timer_fd.valid());
    const ScopedFd epoll_fd(epoll_create1(EPOLL_CLOEXEC));
    PCHECK(epoll_fd.valid());
    struct epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = timer_fd.get();
    PCHECK(epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, timer_fd.get(), &event) ==
           0);
    struct itimerspec spec = {};
    spec.it_value.tv_nsec = FLAGS_interval_us * 1000L;
    spec.it_interval = spec.it_value;
    PCHECK(timerfd_settime(timer_fd.get(), 0, &spec, nullptr) == 0);
    const pid_t tid = shared->receiver_tid.load();
    for (int i = 0; i < FLAGS_loops; ++i) {
      PCHECK(epoll_wait(epoll_fd.get(), &event, 1, -1) == 1);
      uint64_t expirations;
      PCHECK(read(timer_fd.get(), &expirations, sizeof(expirations)) > 0);
      shared->sent_ns.store(monotonic_clock::now().time_since_epoch().count());
      PCHECK(tgkill(child, tid, signal) == 0);
    }
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
                          results.read.get());
}

// sigwaittest -f and ptsematest at the same priority, interval and loop
// count, as (key, figures) rows; a tool that is missing or fails is said on
// stderr and left out.
std::vector<std::pair<std::string, Figures>> MeasureTools() {
  char work_dir[] = "/tmp/aos_wakeup_benchmark_XXXXXX";
  PCHECK(mkdtemp(work_dir) != nullptr);
  std::vector<std::string> common = {StrCat("-p", FLAGS_priority),
                                     StrCat("-i", FLAGS_interval_us),
                                     StrCat("-l", FLAGS_loops), "-q"};
  if (FLAGS_cpu >= 0) common.push_back(StrCat("-a", FLAGS_cpu));
  struct Tool {
    std::string key, tool, name;
    std::vector<std::string> args;
  };
  std::vector<std::pair<std::string, Figures>> rows;
  for (Tool& t : std::vector<Tool>{
           {"sigwaittest_f",
            "sigwaittest",
            "sigwaittest -f (signal, processes)",
            {"-f"}},
           {"ptsematest", "ptsematest", "ptsematest (mutex, threads)", {}}}) {
    if (access(bench::RtTestsTool(t.tool).c_str(), X_OK) != 0) {
      std::cerr << "shm_wakeup_benchmark: no " << bench::RtTestsTool(t.tool)
                << " (Debian package rt-tests): its row is left out\n";
      continue;
    }
    t.args.insert(t.args.end(), common.begin(), common.end());
    absl::StatusOr<Figures> f = bench::RunRtTest(t.tool, t.args, work_dir);
    if (!f.ok()) {
      std::cerr << "shm_wakeup_benchmark: " << f.status().message()
                << ": its row is left out\n";
      continue;
    }
    f->name = t.name;
    rows.emplace_back(t.key, *std::move(f));
  }
  std::filesystem::remove_all(work_dir);
  return rows;
}

void PrintTable(const std::vector<std::pair<std::string, Figures>>& rows) {
  printf(
      "\nWakeup latency, %d messages every %d us, SCHED_FIFO priority %d "
      "(0 = normal), %s, us:\n\n",
      FLAGS_loops, FLAGS_interval_us, FLAGS_priority,
      FLAGS_cpu >= 0 ? StrCat("all on CPU ", FLAGS_cpu).c_str()
                     : "placed by the scheduler");
  printf("%-48s %8s %8s %8s %8s %12s\n", "", "min", "avg", "p99", "max",
         "avg/sigwait");
  const Figures* sigwait = nullptr;
  for (const auto& [key, f] : rows) {
    if (key == "sigwaittest_f") sigwait = &f;
  }
  for (const auto& [key, f] : rows) {
    char p99[32] = "-";
    if (!std::isnan(f.p99_us)) snprintf(p99, sizeof(p99), "%.1f", f.p99_us);
    char ratio[32] = "-";
    if (sigwait != nullptr && sigwait->avg_us > 0) {
      snprintf(ratio, sizeof(ratio), "%.2fx", f.avg_us / sigwait->avg_us);
    }
    printf("%-48s %8.2f %8.2f %8s %8.1f %12s\n", f.name.c_str(), f.min_us,
           f.avg_us, p99, f.max_us, ratio);
  }
  printf(
      "\n(rt-tests measure whole microseconds; aos figures come from its "
      "own histogram, p99 within 1.6%%.)\n");
}

std::string Json(const std::vector<std::pair<std::string, Figures>>& rows) {
  JsonWriter json(2);
  json.BeginObject();
  json.Key("loops").Number(FLAGS_loops);
  json.Key("interval_us").Number(FLAGS_interval_us);
  json.Key("priority").Number(FLAGS_priority);
  json.Key("cpu").Number(FLAGS_cpu);
  json.Key("rows").BeginObject();
  for (const auto& [key, f] : rows) {
    json.Key(key);
    bench::WriteFigures(f, &json);
  }
  json.EndObject();
  json.EndObject();
  return json.Text();
}

int Main() {
  ExitOnFlagError(CheckAtLeast("--loops", FLAGS_loops, 1));
  ExitOnFlagError(CheckInRange("--interval_us", FLAGS_interval_us, 1, 1000000));
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99));
  ExitOnFlagError(CheckAtLeast(
      "--cpu", FLAGS_cpu, -1, " is not a CPU: give its number, or -1 for any"));
  // Opened first, so that a path it cannot write fails before measuring.
  FlagOutputFile json_file("--json", FLAGS_json);
  auto config = configuration::ReadConfigFromJson(kConfig);
  CHECK(config.ok()) << config.status().message();
  char base[] = "/dev/shm/aos_wakeup_benchmark_XXXXXX";
  PCHECK(mkdtemp(base) != nullptr);
  FLAGS_shm_base = base;

  std::vector<std::pair<std::string, Figures>> rows;
  if (FLAGS_run_timer_driven) {
    rows.emplace_back("timer_driven",
                      MeasureAos(&config->message(), Pattern::kTimer));
  }
  if (FLAGS_run_floor) rows.emplace_back("floor", MeasureFloor());
  if (FLAGS_run_ping_pong) {
    rows.emplace_back("ping_pong",
                      MeasureAos(&config->message(), Pattern::kPingPong));
  }
  std::filesystem::remove_all(base);
  if (FLAGS_run_tools) {
    for (auto& row : MeasureTools()) rows.push_back(std::move(row));
  }
  PrintTable(rows);
  if (json_file.enabled()) json_file.WriteAndClose(Json(rows));
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: shm_wakeup_benchmark [--priority=N] [--loops=N] "
      "[--interval_us=N] [--cpu=N] [--json=FILE]\nCross-process wakeup latency "
      "of ShmEventLoop beside "
      "sigwaittest -f and ptsematest, measured in the same run.");
  return aos::Main();
}
