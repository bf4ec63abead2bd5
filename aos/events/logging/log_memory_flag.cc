#include "aos/events/logging/log_memory_flag.h"

#include "aos/util/str_cat.h"

DEFINE_int64(log_memory_mb, aos::logging::kDefaultLogMemoryBytes >> 20,
             "Reading a log: the most memory (MiB) the chunks decompressed at "
             "the same time may hold; a chunk that would need more is refused "
             "with a line naming it, and reading goes on. The default holds "
             "the largest chunk aos_logger writes (64 MiB) with room to "
             "spare.");

namespace aos::logging {

absl::StatusOr<std::unique_ptr<LogFileReader>> OpenLogWithMemoryFlag(
    std::string_view path) {
  constexpr int64_t kMost = int64_t{1} << 20;  // 1 TiB.
  if (FLAGS_log_memory_mb < 1 || FLAGS_log_memory_mb > kMost) {
    return absl::InvalidArgumentError(
        StrCat("--log_memory_mb=", FLAGS_log_memory_mb, ": give 1 to ", kMost,
               " (MiB)"));
  }
  return LogFileReader::Open(
      path,
      {.memory_budget_bytes = static_cast<uint64_t>(FLAGS_log_memory_mb) << 20,
       .budget_name = StrCat("--log_memory_mb=", FLAGS_log_memory_mb)});
}

}  // namespace aos::logging
