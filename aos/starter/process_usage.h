#ifndef AOS_STARTER_PROCESS_USAGE_H_
#define AOS_STARTER_PROCESS_USAGE_H_

// What a process has used so far, from /proc: CPU time and resident
// memory. Two samples give its CPU share over the time between them.
//
//   std::optional<ProcessUsage> before = ReadProcessUsage(pid);
//   ...
//   std::optional<ProcessUsage> after = ReadProcessUsage(pid);
//   float share = CpuShare(*before, *after);  // 1.0: one full CPU

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace aos::starter {

struct ProcessUsage {
  // When it was read (CLOCK_MONOTONIC).
  std::chrono::steady_clock::time_point read_at;
  // User plus system time of every thread so far.
  std::chrono::nanoseconds cpu_time{0};
  uint64_t resident_bytes = 0;
  // /proc/PID/comm.
  std::string name;
};

// `pid`'s usage now, or nothing if it is gone or /proc cannot be read.
std::optional<ProcessUsage> ReadProcessUsage(pid_t pid);

// The CPU it used between two samples of the same process, as a share of
// one CPU over the time between them (0 when no time passed).
float CpuShare(const ProcessUsage& before, const ProcessUsage& after);

}  // namespace aos::starter

#endif  // AOS_STARTER_PROCESS_USAGE_H_
