#include "aos/util/idle_poller.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
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

absl::StatusOr<std::unique_ptr<IdlePoller>> IdlePoller::Start(
    const cpu_set_t& cpus) {
  const int count = CPU_COUNT(&cpus);
  if (count == 0) {
    return absl::InvalidArgumentError("idle poller: no CPU to poll");
  }
  std::unique_ptr<IdlePoller> poller(new IdlePoller());
  poller->cpus_text_ = FormatCpuList(cpus);
  poller->tids_ = std::vector<std::atomic<pid_t>>(count);
  for (int cpu = 0, i = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    // Each thread says whether it could become a poller before it spins.
    std::atomic<int> result{-1};
    const char* step = "";
    std::atomic<pid_t>* tid = &poller->tids_[i++];
    std::atomic<bool>* stop = &poller->stop_;
    poller->threads_.emplace_back([cpu, tid, stop, &result, &step]() {
      pthread_setname_np(pthread_self(), "aos_idle_poll");
      // Signals are for the process's other threads: a stop signal handled
      // here, at SCHED_IDLE, could wait behind every other thread.
      sigset_t all;
      sigfillset(&all);
      pthread_sigmask(SIG_BLOCK, &all, nullptr);
      tid->store(static_cast<pid_t>(syscall(SYS_gettid)));
      const int error = BecomeIdlePoller(cpu, &step);
      result.store(error, std::memory_order_release);
      if (error != 0) return;
      while (!stop->load(std::memory_order_relaxed)) CpuRelax();
    });
    int error;
    while ((error = result.load(std::memory_order_acquire)) < 0) {
      std::this_thread::yield();
    }
    if (error != 0) {
      poller->StopAll();
      return absl::FailedPreconditionError(
          StrCat("idle poller: could not run a poller on CPU ", cpu, ": ", step,
                 ": ", strerror(error)));
    }
  }
  return poller;
}

IdlePoller::~IdlePoller() { StopAll(); }

void IdlePoller::StopAll() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

std::vector<pid_t> IdlePoller::thread_ids() const {
  std::vector<pid_t> ids;
  for (const std::atomic<pid_t>& tid : tids_) ids.push_back(tid.load());
  return ids;
}

}  // namespace aos
