#ifndef AOS_CONFIG_FLAG_H_
#define AOS_CONFIG_FLAG_H_

// The --config flag every aos program shares, defined here once.
//
//   auto config = aos::ReadConfigFlag("aos/aos_config.json");
//   if (!config.ok()) { std::cerr << "ping: " << ...message() << "\n"; ... }
//
// An explicit --config is read as given. Without one, a program reads its
// own default: a file of the workspace (e.g. "examples/pingpong_config.json",
// built by an aos_config rule), looked for in the binary's runfiles, next to
// the binary (by file name), then in the working directory.

#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration.h"
#include "gflags/gflags.h"

DECLARE_string(config);

namespace aos {

// Reads the configuration --config names, or `default_config` (see above).
// Errors say which files were tried and name the flag.
[[nodiscard]] absl::StatusOr<FlatbufferDetachedBuffer<Configuration>>
ReadConfigFlag(std::string_view default_config);

}  // namespace aos

#endif  // AOS_CONFIG_FLAG_H_
