#include "aos/util/flag_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aos/util/printable.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/user_error.h"

namespace aos {

std::string FlagWithValue(std::string_view flag, std::string_view value) {
  return StrCat(flag, "=", InlinePrintable(value));
}

absl::Status CheckOneOf(std::string_view flag, std::string_view value,
                        std::initializer_list<std::string_view> choices) {
  for (std::string_view choice : choices) {
    if (value == choice) return absl::OkStatus();
  }
  return FlagError(flag, value,
                   StrCat(" is not one of ", StrJoin(choices, ", ")));
}

absl::Status CheckWritableFile(std::string_view flag, const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  const ScopedFd fd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return absl::InvalidArgumentError(StrCat("cannot write ", flag, "=",
                                             InlinePrintable(path), ": ",
                                             strerror(errno)));
  }
  return absl::OkStatus();
}

void ExitOnFlagError(const absl::Status& status) {
  if (status.ok()) return;
  ExitForUserError(StrCat(status.message()));
}

}  // namespace aos
