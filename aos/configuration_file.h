#ifndef AOS_CONFIGURATION_FILE_H_
#define AOS_CONFIGURATION_FILE_H_

// Reading one configuration file (or schema) defensively: a config names its
// imports, so any path may come from a user, and a mistake must be one clear
// line, never a hang (a FIFO), an endless read (/dev/zero), an exception or a
// CHECK.
//
//   absl::StatusOr<std::string> json = ReadConfigFileBytes(path, 64 << 20);
//   // e.g. "sub/x.json: is a directory, not a regular file"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aos::configuration {

// The default largest file ReadConfig reads: 64 MiB, far above any config
// (AOS's largest are a few MB with schemas embedded).
inline constexpr int64_t kDefaultMaxConfigFileBytes = int64_t{64} << 20;

// Returns the contents of `path`, which must name a regular file (through
// symlinks) of at most `max_bytes` bytes. Errors (NotFound for a missing
// file, InvalidArgument otherwise) are one line starting with `path`: no such
// file; a directory, FIFO, character or block device or socket ("is a FIFO,
// not a regular file"); a symlink loop; a name too long; no permission; a
// file larger than `max_bytes` (saying both sizes); or a read error. The
// file's type is checked on the opened descriptor, so swapping the file
// after the check changes nothing, and opening never blocks (a FIFO opens
// non-blocking). The path is shown escaped and, past
// aos::kPrintablePathMaxBytes, elided with its length (aos/util/printable.h).
// Uses no exceptions.
absl::StatusOr<std::string> ReadConfigFileBytes(const std::string& path,
                                                int64_t max_bytes);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_FILE_H_
