#ifndef AOS_UTIL_IDLE_POLLER_H_
#define AOS_UTIL_IDLE_POLLER_H_

// Keeping CPUs from halting while a realtime loop runs, on machines where
// nothing else can: one thread per CPU, pinned to it at SCHED_IDLE (the
// lowest class there is), spinning on the CPU's pause instruction. Any
// other runnable thread takes the CPU from it at once, so it only ever runs
// when the CPU would otherwise go idle; and an idle CPU that runs it never
// halts, so waking a thread on it costs an interrupt to a running CPU, not
// the exit of a halted one from the hypervisor (about 90 us on a VM whose
// cpuidle driver is `none`, where /dev/cpu_dma_latency changes nothing
// because there is no idle state to forbid). This is what booting with
// idle=poll does, for as long as the poller lives and only on its CPUs.
//
// The price is the whole CPU: each polled CPU shows 100 % busy and, on a
// VM, keeps a host CPU busy. Opt in (ShmEventLoop's --idle_poll), and pin
// the loop so the poller covers only its own CPUs.
//
//   absl::StatusOr<std::unique_ptr<IdlePoller>> poller =
//       IdlePoller::Start(cpus);
//   ... the CPUs in `cpus` poll when idle until *poller is destroyed ...
//
// Start and the destructor allocate and make syscalls: call them before and
// after a realtime loop runs, not in it.

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace aos {

class IdlePoller {
 public:
  // Starts a SCHED_IDLE spinning thread on each CPU of `cpus`, with every
  // signal blocked (they go to the process's other threads). Fails, with
  // no thread left running, when `cpus` is empty or a thread cannot be
  // pinned or given SCHED_IDLE (a CPU that does not exist or is not
  // allowed), naming the CPU.
  static absl::StatusOr<std::unique_ptr<IdlePoller>> Start(
      const cpu_set_t& cpus);

  // Stops and joins the threads.
  ~IdlePoller();
  IdlePoller(const IdlePoller&) = delete;
  IdlePoller& operator=(const IdlePoller&) = delete;

  // The CPUs polled, as a CPU list ("0-1").
  const std::string& cpus() const { return cpus_text_; }
  // The threads' kernel ids, one per CPU in ascending CPU order (tests look
  // at their scheduling policy and affinity).
  std::vector<pid_t> thread_ids() const;

 private:
  IdlePoller() = default;
  // Stops the threads started so far and joins them.
  void StopAll();

  std::atomic<bool> stop_{false};
  std::vector<pthread_t> threads_;
  // Written by each thread before it spins; read once all have started.
  std::vector<std::atomic<pid_t>> tids_;
  std::string cpus_text_;
};

}  // namespace aos

#endif  // AOS_UTIL_IDLE_POLLER_H_
