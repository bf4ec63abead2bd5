#ifndef AOS_CONFIG_FLAG_H_
#define AOS_CONFIG_FLAG_H_

// The --config flag of aos programs.
//
//   DEFINE_string(config, "", "...; default: pingpong_config.json next to the
//   binary"); auto config = aos::ReadConfigFlag(FLAGS_config,
//   "pingpong_config.json");
//
// An explicit path is read as given. An empty one means `default_file`,
// looked for next to the executable (where Bazel puts an aos_config output
// beside the binaries of its package), then in the working directory.

#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration.h"

namespace aos {

// Reads the configuration --config names (see above). Errors say which
// files were tried and name the flag.
absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFlag(
    std::string_view flag_value, std::string_view default_file);

}  // namespace aos

#endif  // AOS_CONFIG_FLAG_H_
