// Timer wakeup latency of ShmEventLoop beside the kernel mechanisms it could
// be built on, in one process, at one priority and interval, in rounds that
// run every row in turn (so drift on a shared machine hits all rows alike):
//
// - clock_nanosleep(TIMER_ABSTIME): what cyclictest measures;
// - a bare periodic timerfd in epoll_wait, clock read as epoll_wait returns;
// - the same, but the timerfd read before the clock (the order ShmEventLoop
//   used before it ran handlers first);
// - epoll_pwait2 with a relative timeout and no timerfd (the alternative);
// - an aos ShmEventLoop repeating timer (handler start - scheduled time).
//
//   bazel run -c opt //tools/bench:timer_wakeup_benchmark -- --priority=80
//
// Latency is always the monotonic clock read by the woken thread minus the
// time the wakeup was due. Without realtime permission use --priority=0.
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_entry.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/scoped_fd.h"
#include "glog/logging.h"
#include "tools/bench/bench_figures.h"

DEFINE_int32(loops, 250, "Wakeups per row per round.");
DEFINE_int32(rounds, 20, "Rounds; each runs every row once.");
DEFINE_int32(interval_us, 1000, "Microseconds between wakeups.");
DEFINE_int32(priority, 0, "SCHED_FIFO priority (0 = normal scheduling).");

namespace aos {
namespace {

using std::chrono::nanoseconds;
using time_point = monotonic_clock::time_point;

nanoseconds Interval() { return std::chrono::microseconds(FLAGS_interval_us); }

// The first due time of a row: a little after now, on no particular phase.
time_point FirstDue() { return monotonic_clock::now() + 2 * Interval(); }

void ClockNanosleepRow(timing::LatencyRecorder* latency) {
  const nanoseconds interval = Interval();
  time_point due = FirstDue();
  for (int i = 0; i < FLAGS_loops; ++i) {
    const struct timespec when = ToTimespec(due.time_since_epoch());
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, nullptr) ==
           EINTR) {
    }
    const time_point now = monotonic_clock::now();
    latency->Record(now - due);
    // Late by more than an interval: skip the wakeups already passed, as
    // cyclictest does.
    do {
      due += interval;
    } while (due <= now);
  }
}

// A periodic timerfd in epoll; `read_first` reads it before the clock.
void TimerfdRow(bool read_first, timing::LatencyRecorder* latency) {
  const nanoseconds interval = Interval();
  const ScopedFd timer_fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
  PCHECK(timer_fd.valid()) << "timerfd_create";
  const ScopedFd epoll_fd(epoll_create1(0));
  PCHECK(epoll_fd.valid()) << "epoll_create1";
  struct epoll_event event = {};
  event.events = EPOLLIN;
  PCHECK(epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, timer_fd.get(), &event) == 0);
  time_point due = FirstDue();
  const struct itimerspec spec = {
      .it_interval = ToTimespec(interval),
      .it_value = ToTimespec(due.time_since_epoch())};
  PCHECK(timerfd_settime(timer_fd.get(), TFD_TIMER_ABSTIME, &spec, nullptr) ==
         0);
  for (int i = 0; i < FLAGS_loops; ++i) {
    struct epoll_event ready;
    if (epoll_wait(epoll_fd.get(), &ready, 1, -1) != 1) continue;
    uint64_t expirations = 0;
    time_point now;
    if (read_first) {
      PCHECK(read(timer_fd.get(), &expirations, sizeof(expirations)) > 0);
      now = monotonic_clock::now();
    } else {
      now = monotonic_clock::now();
      PCHECK(read(timer_fd.get(), &expirations, sizeof(expirations)) > 0);
    }
    latency->Record(now - due);
    // The read consumed every expiration so far: the next wakeup is due
    // `expirations` intervals later.
    due += static_cast<int64_t>(expirations) * interval;
  }
}

// epoll_pwait2 with a timeout until the due time, no timerfd: the other
// way an epoll loop can wait for its next timer. The timeout is relative,
// so it is computed from the clock just before the call.
void EpollTimeoutRow(timing::LatencyRecorder* latency) {
  const nanoseconds interval = Interval();
  const ScopedFd epoll_fd(epoll_create1(0));
  PCHECK(epoll_fd.valid()) << "epoll_create1";
  time_point due = FirstDue();
  for (int i = 0; i < FLAGS_loops; ++i) {
    time_point now = monotonic_clock::now();
    while (now < due) {
      const struct timespec timeout = ToTimespec(due - now);
      struct epoll_event ready;
      PCHECK(epoll_pwait2(epoll_fd.get(), &ready, 1, &timeout, nullptr) >= 0 ||
             errno == EINTR);
      now = monotonic_clock::now();
    }
    latency->Record(now - due);
    do {
      due += interval;
    } while (due <= now);
  }
}

void EventLoopRow(const Configuration* config,
                  timing::LatencyRecorder* latency) {
  ShmEventLoop loop(config, "timer_wakeup_benchmark");
  loop.SkipTimingReport();
  // The thread already runs at --priority: a loop given a runtime priority
  // would drop back to normal scheduling when Run() returns.
  int calls = 0;
  TimerHandler* timer = loop.AddTimer([&]() {
    latency->Record(loop.monotonic_now() - loop.context().monotonic_event_time);
    if (++calls == FLAGS_loops) loop.Exit();
  });
  loop.OnRun([&]() { timer->Schedule(FirstDue(), Interval()); });
  loop.Run();
}

void PrintRow(const char* what, const timing::LatencyRecorder& row,
              const timing::LatencyRecorder& baseline) {
  const bench::Figures f =
      bench::FromHistogram(what, row.histogram(), row.statistic());
  const bench::Figures base = bench::FromHistogram(
      "baseline", baseline.histogram(), baseline.statistic());
  printf("%-44s %7.2f %7.2f %7.2f %7.1f %8.1f   %5.2fx %5.2fx\n", what,
         f.min_us, f.avg_us, f.p50_us, f.p99_us, f.max_us,
         f.avg_us / base.avg_us, f.p50_us / base.p50_us);
}

int Main() {
  ExitOnFlagError(CheckAtLeast("--loops", FLAGS_loops, 1));
  ExitOnFlagError(CheckAtLeast("--rounds", FLAGS_rounds, 1));
  ExitOnFlagError(CheckInRange("--interval_us", FLAGS_interval_us, 1, 1000000));
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99));
  // A loop with timers only needs no channels.
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [] })");
  CHECK(config.ok()) << config.status().message();
  if (FLAGS_priority > 0) {
    struct sched_param param = {};
    param.sched_priority = FLAGS_priority;
    PCHECK(sched_setscheduler(0, SCHED_FIFO, &param) == 0)
        << "SCHED_FIFO " << FLAGS_priority
        << " refused: run as root, or with --priority=0";
    PCHECK(mlockall(MCL_CURRENT | MCL_FUTURE) == 0) << "mlockall";
  }
  timing::LatencyRecorder nanosleep_row, read_after_row, read_first_row,
      timeout_row, loop_row;
  for (int round = 0; round < FLAGS_rounds; ++round) {
    fprintf(stderr, "round %d/%d\n", round + 1, FLAGS_rounds);
    ClockNanosleepRow(&nanosleep_row);
    TimerfdRow(/*read_first=*/false, &read_after_row);
    TimerfdRow(/*read_first=*/true, &read_first_row);
    EpollTimeoutRow(&timeout_row);
    EventLoopRow(&config->message(), &loop_row);
  }
  printf(
      "%d rounds x %d wakeups every %d us, SCHED_FIFO %d\n"
      "%-44s %7s %7s %7s %7s %8s   %6s %6s\n",
      FLAGS_rounds, FLAGS_loops, FLAGS_interval_us, FLAGS_priority,
      "wakeup latency (us)", "min", "avg", "p50", "p99", "max", "avg/cn",
      "p50/cn");
  PrintRow("clock_nanosleep (cyclictest's mechanism)", nanosleep_row,
           nanosleep_row);
  PrintRow("timerfd + epoll_wait, clock, then read", read_after_row,
           nanosleep_row);
  PrintRow("timerfd + epoll_wait, read, then clock", read_first_row,
           nanosleep_row);
  PrintRow("epoll_pwait2 with a timeout, no timerfd", timeout_row,
           nanosleep_row);
  PrintRow("aos ShmEventLoop timer", loop_row, nanosleep_row);
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: timer_wakeup_benchmark [--priority=80] [--loops=N] "
      "[--rounds=N] [--interval_us=N]\n"
      "Timer wakeup latency of ShmEventLoop beside clock_nanosleep and a bare "
      "timerfd + epoll. docs/benchmarks.md.");
  return aos::Main();
}
