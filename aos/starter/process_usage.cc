#include "aos/starter/process_usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "aos/util/str_cat.h"

namespace aos::starter {

std::optional<ProcessUsage> ReadProcessUsage(pid_t pid) {
  ProcessUsage usage;
  usage.read_at = std::chrono::steady_clock::now();
  std::ifstream stat(StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // The name is in parentheses and may hold spaces: the fields counted
  // here start after its last ')'.
  const size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(name_end + 1));
  // Fields 3 to 13 (state ... cmajflt), then utime and stime.
  std::string skipped;
  for (int i = 3; i <= 13; ++i) fields >> skipped;
  uint64_t user_ticks = 0, system_ticks = 0;
  if (!(fields >> user_ticks >> system_ticks)) return std::nullopt;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  usage.cpu_time = std::chrono::nanoseconds((user_ticks + system_ticks) *
                                            (1'000'000'000 / ticks_per_second));
  std::ifstream statm(StrCat("/proc/", pid, "/statm"));
  uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return std::nullopt;
  usage.resident_bytes = resident_pages * sysconf(_SC_PAGESIZE);
  std::ifstream comm(StrCat("/proc/", pid, "/comm"));
  std::getline(comm, usage.name);
  return usage;
}

float CpuShare(const ProcessUsage& before, const ProcessUsage& after) {
  const std::chrono::duration<double> wall = after.read_at - before.read_at;
  if (wall.count() <= 0) return 0;
  const std::chrono::duration<double> cpu = after.cpu_time - before.cpu_time;
  return static_cast<float>(cpu.count() / wall.count());
}

}  // namespace aos::starter
