#include "aos/config_flag.h"

#include <filesystem>
#include <vector>

#include "aos/util/str_cat.h"

namespace aos {

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFlag(
    std::string_view flag_value, std::string_view default_file) {
  if (!flag_value.empty()) {
    auto config = configuration::ReadConfig(flag_value);
    if (!config.ok()) {
      return absl::Status(config.status().code(),
                          StrCat("--config: ", config.status().message()));
    }
    return config;
  }
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  std::vector<fs::path> candidates;
  if (!error) candidates.push_back(executable.parent_path() / default_file);
  candidates.push_back(fs::current_path(error) / default_file);
  for (const fs::path& candidate : candidates) {
    if (fs::exists(candidate))
      return configuration::ReadConfig(candidate.string());
  }
  std::vector<std::string> tried;
  for (const fs::path& candidate : candidates)
    tried.push_back(candidate.string());
  return absl::NotFoundError(StrCat("no --config given and no ", default_file,
                                    " found (looked at ", StrJoin(tried, ", "),
                                    "); pass --config=PATH"));
}

}  // namespace aos
