#include "aos/util/cpu_set.h"

#include <charconv>

#include "aos/util/str_cat.h"

namespace aos {
namespace {

bool ParseCpu(std::string_view text, int* cpu) {
  const auto result =
      std::from_chars(text.data(), text.data() + text.size(), *cpu);
  return result.ec == std::errc() && result.ptr == text.data() + text.size() &&
         *cpu >= 0 && *cpu < CPU_SETSIZE;
}

}  // namespace

absl::StatusOr<cpu_set_t> ParseCpuList(std::string_view list) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (list.empty()) return absl::InvalidArgumentError("empty CPU list");
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view part = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view()
                                           : list.substr(comma + 1);
    const size_t dash = part.find('-');
    int first;
    int last;
    if (dash == std::string_view::npos) {
      if (!ParseCpu(part, &first)) {
        return absl::InvalidArgumentError(
            StrCat("'", part, "' is not a CPU number"));
      }
      last = first;
    } else if (!ParseCpu(part.substr(0, dash), &first) ||
               !ParseCpu(part.substr(dash + 1), &last) || last < first) {
      return absl::InvalidArgumentError(
          StrCat("'", part, "' is not a CPU range like 0-3"));
    }
    for (int cpu = first; cpu <= last; ++cpu) CPU_SET(cpu, &cpus);
  }
  return cpus;
}

std::string FormatCpuList(const cpu_set_t& cpus) {
  std::string list;
  int cpu = 0;
  while (cpu < CPU_SETSIZE) {
    if (!CPU_ISSET(cpu, &cpus)) {
      ++cpu;
      continue;
    }
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &cpus)) ++last;
    if (!list.empty()) list += ',';
    StrAppend(&list, cpu);
    if (last > cpu) StrAppend(&list, "-", last);
    cpu = last + 1;
  }
  return list;
}

}  // namespace aos
