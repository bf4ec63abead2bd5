#ifndef AOS_EVENTS_LOGGING_LOG_MEMORY_FLAG_H_
#define AOS_EVENTS_LOGGING_LOG_MEMORY_FLAG_H_

// The --log_memory_mb flag of the programs that read logs (aos_dump --log,
// aos_timing_report_streamer --log), defined here once: how much memory the
// chunks being read at the same time may hold, so that a forged log (a
// decompression bomb) cannot make a reader balloon (docs/logging.md).
//
//   auto log = aos::logging::OpenLogWithMemoryFlag(FLAGS_log);
//   if (!log.ok()) aos::ExitForUserError(StrCat("--log: ", ...message()));

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/events/logging/log_file_reader.h"
#include "gflags/gflags.h"

DECLARE_int64(log_memory_mb);

namespace aos::logging {

// LogFileReader::Open(path) with --log_memory_mb as its memory budget, named
// in the problem that refuses a chunk over it. Errors: --log_memory_mb out
// of range (1 to 1048576, naming the flag), or those of Open.
[[nodiscard]] absl::StatusOr<std::unique_ptr<LogFileReader>>
OpenLogWithMemoryFlag(std::string_view path);

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_MEMORY_FLAG_H_
