#ifndef AOS_UTIL_CPU_LATENCY_LIMIT_H_
#define AOS_UTIL_CPU_LATENCY_LIMIT_H_

// Keeping CPUs out of idle states that are slow to leave, while a realtime
// loop runs: a PM QoS request on how long a CPU may take to wake up, as
// cyclictest makes one for its own runs.
//
//   absl::StatusOr<std::unique_ptr<CpuLatencyLimit>> limit =
//       CpuLatencyLimit::HoldForAllCpus(0);
//   if (!limit.ok()) LOG(WARNING) << limit.status().message();
//   ... the CPUs stay out of deep idle states until *limit is destroyed ...
//
// The kernel offers two interfaces, and this class uses either:
// - /dev/cpu_dma_latency, for every CPU: the request lives exactly as long as
//   the open file. The kernel drops it when the file is closed, so a crash
//   leaves nothing behind.
// - /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us, one file
//   per CPU: only the CPUs a pinned loop runs on pay for the limit (an idle
//   CPU that polls instead of halting burns power, and on a VM a whole host
//   CPU). But the value stays until somebody rewrites it. Holders of one CPU
//   coordinate through a lock file per CPU (`lock_dir`/cpuN, open file
//   description locks): the first holder records the value it found there,
//   each holder keeps the strictest limit asked for, and the last one to
//   release it restores the recorded value. A holder killed with SIGKILL
//   leaves its limit in place until the next holder of that CPU releases
//   its own; that holder restores the value recorded before either.
//
// A limit of 0 us keeps the CPUs polling when idle (no halt at all: on
// cpuidle's haltpoll and menu governors alike). Both interfaces need root
// (or write access to the files given by an administrator); errors name the
// file and say how to grant it.
//
// Not for the realtime path: holding and releasing allocate and make
// syscalls. Hold before Run(), release after it.

#include <sched.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/util/scoped_fd.h"

namespace aos {

// Where the kernel's files are. Tests point them at a directory of their
// own.
struct CpuLatencyLimitPaths {
  std::string cpu_dma_latency = "/dev/cpu_dma_latency";
  // Holds cpuN/power/pm_qos_resume_latency_us.
  std::string sysfs_cpus = "/sys/devices/system/cpu";
  // Lock files of per-CPU holders, created on first use.
  std::string lock_dir = "/run/lock/aos_cpu_latency";
};

class CpuLatencyLimit {
 public:
  using Paths = CpuLatencyLimitPaths;

  // The largest limit the interfaces take, in us (one second).
  static constexpr int32_t kMaxLimitUs = 1000000;

  // Holds `limit_us` (0..kMaxLimitUs) for every CPU through
  // /dev/cpu_dma_latency. The error names the file and the fix.
  static absl::StatusOr<std::unique_ptr<CpuLatencyLimit>> HoldForAllCpus(
      int32_t limit_us, const Paths& paths = Paths());

  // Holds `limit_us` for each CPU of `cpus` (not empty) through its
  // pm_qos_resume_latency_us, keeping a stricter limit another holder set.
  // Changes nothing if any CPU's file cannot be written; the error names it.
  static absl::StatusOr<std::unique_ptr<CpuLatencyLimit>> HoldForCpus(
      int32_t limit_us, const cpu_set_t& cpus, const Paths& paths = Paths());

  // Whether every CPU of `cpus` has a per-CPU file this process may write,
  // and the lock directory can be used. Costs a few syscalls.
  static bool PerCpuAvailable(const cpu_set_t& cpus,
                              const Paths& paths = Paths());

  // Releases the request (see above for per-CPU limits).
  ~CpuLatencyLimit();

  CpuLatencyLimit(const CpuLatencyLimit&) = delete;
  CpuLatencyLimit& operator=(const CpuLatencyLimit&) = delete;

  int32_t limit_us() const { return limit_us_; }
  // The CPUs limited, as a CPU list ("1", "0,2-3"), or "all" for
  // /dev/cpu_dma_latency.
  const std::string& cpus() const { return cpus_; }
  // "0 us on all CPUs (/dev/cpu_dma_latency)" or "0 us on CPUs 1
  // (pm_qos_resume_latency_us)".
  std::string ToString() const;

 private:
  // One CPU held through sysfs: its value file and its lock file.
  struct HeldCpu {
    int cpu;
    std::string value_path;
    ScopedFd lock_fd;
  };

  CpuLatencyLimit(int32_t limit_us, std::string cpus, ScopedFd dma_latency_fd,
                  std::vector<HeldCpu> held_cpus);

  // Restores the CPU's value if no one else holds it, then closes the lock
  // file (which drops the mutex).
  static void ReleaseCpu(HeldCpu& held);

  const int32_t limit_us_;
  const std::string cpus_;
  // /dev/cpu_dma_latency, or none.
  const ScopedFd dma_latency_fd_;
  std::vector<HeldCpu> held_cpus_;
};

}  // namespace aos

#endif  // AOS_UTIL_CPU_LATENCY_LIMIT_H_
