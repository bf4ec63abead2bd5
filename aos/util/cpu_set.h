#ifndef AOS_UTIL_CPU_SET_H_
#define AOS_UTIL_CPU_SET_H_

// Parsing CPU lists as taskset and the kernel print them: "0", "0,2", "1-3".

#include <sched.h>

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aos {

// The CPUs of `list` ("0,2-3"). Errors name the part that is not a CPU
// number or range.
absl::StatusOr<cpu_set_t> ParseCpuList(std::string_view list);

// `cpus` as the shortest such list ("0,2-3"); "" when empty. Reads back
// through ParseCpuList.
std::string FormatCpuList(const cpu_set_t& cpus);

}  // namespace aos

#endif  // AOS_UTIL_CPU_SET_H_
