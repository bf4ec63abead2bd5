#include "aos/config_flag.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "aos/util/str_cat.h"

DEFINE_string(config, "",
              "The configuration: a JSON file (imports are read relative to "
              "it), flattened or not. Without it, the program's own default "
              "(its usage says which).");

namespace aos {

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFlag(
    std::string_view default_config) {
  if (!FLAGS_config.empty()) {
    auto config = configuration::ReadConfig(FLAGS_config);
    if (!config.ok()) {
      return absl::Status(config.status().code(),
                          StrCat("--config: ", config.status().message()));
    }
    return config;
  }
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path file_name = fs::path(default_config).filename();
  std::vector<fs::path> candidates;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(fs::path(executable.string() + ".runfiles") / "aos" /
                         default_config);
    candidates.push_back(executable.parent_path() / file_name);
  }
  // Run by a test or by another program's runfiles (`bazel test`, `bazel
  // run`): the runfiles tree it was started from, whose binaries have no
  // runfiles tree of their own.
  for (const char* variable : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* directory = getenv(variable);
    if (directory != nullptr && directory[0] != '\0') {
      candidates.push_back(fs::path(directory) / "aos" / default_config);
    }
  }
  candidates.push_back(fs::current_path(error) / file_name);
  for (const fs::path& candidate : candidates) {
    if (fs::exists(candidate, error)) {
      return configuration::ReadConfig(candidate.string());
    }
  }
  std::vector<std::string> tried;
  for (const fs::path& candidate : candidates) {
    tried.push_back(candidate.string());
  }
  return absl::NotFoundError(StrCat(
      "no --config given and no ", file_name.string(), " found (looked at ",
      StrJoin(tried, ", "), "); pass --config=PATH"));
}

}  // namespace aos
