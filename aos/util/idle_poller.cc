#include "aos/util/idle_poller.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "aos/util/cpu_set.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// One spin: tells the CPU this is a wait loop (on x86 `pause`, which also
// lets a sibling hyperthread run), without a syscall.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Pins the calling thread to `cpu` at SCHED_IDLE: 0, or the errno of the
// step that failed with `*step` naming it.
int BecomeIdlePoller(int cpu, const char** step) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    *step = "sched_setaffinity";
    return errno;
  }
  struct sched_param param = {};
  if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
    *step = "sched_setscheduler(SCHED_IDLE)";
    return errno;
  }
  return 0;
}

}  // namespace

namespace {

// What a poller thread is told, and tells back before it spins. Lives on
// the starting thread's stack until `result` is set.
struct PollerStart {
  int cpu;
  std::atomic<pid_t>* tid;
  const std::atomic<bool>* stop;
  std::atomic<int> result{-1};
  const char* step = "";
};

void* PollerMain(void* arg) {
  PollerStart* start = static_cast<PollerStart*>(arg);
  const std::atomic<bool>* const stop = start->stop;
  pthread_setname_np(pthread_self(), "aos_idle_poll");
  // Signals are for the process's other threads: a stop signal handled
  // here, at SCHED_IDLE, could wait behind every other thread.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  start->tid->store(static_cast<pid_t>(syscall(SYS_gettid)));
  const int error = BecomeIdlePoller(start->cpu, &start->step);
  // `start` may be gone once this is stored.
  start->result.store(error, std::memory_order_release);
  if (error == 0) {
    while (!stop->load(std::memory_order_relaxed)) CpuRelax();
  }
  return nullptr;
}

// A poller needs next to no stack, and a realtime process locks every page
// it maps (mlockall(MCL_FUTURE)): not the 8 MB a thread gets by default.
constexpr size_t kPollerStackBytes = 64 * 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<IdlePoller>> IdlePoller::Start(
    const cpu_set_t& cpus) {
  const int count = CPU_COUNT(&cpus);
  if (count == 0) {
    return absl::InvalidArgumentError("idle poller: no CPU to poll");
  }
  std::unique_ptr<IdlePoller> poller(new IdlePoller());
  poller->cpus_text_ = FormatCpuList(cpus);
  poller->tids_ = std::vector<std::atomic<pid_t>>(count);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(
      &attributes, std::max<size_t>(kPollerStackBytes, PTHREAD_STACK_MIN));
  for (int cpu = 0, i = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    PollerStart start;
    start.cpu = cpu;
    start.tid = &poller->tids_[i++];
    start.stop = &poller->stop_;
    pthread_t thread;
    int error = pthread_create(&thread, &attributes, &PollerMain, &start);
    if (error != 0) {
      start.step = "pthread_create";
    } else {
      poller->threads_.push_back(thread);
      while ((error = start.result.load(std::memory_order_acquire)) < 0) {
        sched_yield();
      }
    }
    if (error != 0) {
      pthread_attr_destroy(&attributes);
      poller->StopAll();
      return absl::FailedPreconditionError(
          StrCat("idle poller: could not run a poller on CPU ", cpu, ": ",
                 start.step, ": ", strerror(error)));
    }
  }
  pthread_attr_destroy(&attributes);
  return poller;
}

IdlePoller::~IdlePoller() { StopAll(); }

void IdlePoller::StopAll() {
  stop_.store(true, std::memory_order_relaxed);
  for (pthread_t thread : threads_) pthread_join(thread, nullptr);
  threads_.clear();
}

std::vector<pid_t> IdlePoller::thread_ids() const {
  std::vector<pid_t> ids;
  for (const std::atomic<pid_t>& tid : tids_) ids.push_back(tid.load());
  return ids;
}

}  // namespace aos
