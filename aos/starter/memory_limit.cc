#include "aos/starter/memory_limit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "aos/util/str_cat.h"

namespace aos::starter {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// The memory hierarchy's root and the name of its limit file, or an error.
absl::Status FindHierarchy(std::string* root, std::string* limit_file) {
  std::ifstream controllers("/sys/fs/cgroup/cgroup.controllers");
  std::stringstream text;
  text << controllers.rdbuf();
  if (text.str().find("memory") != std::string::npos) {
    *root = "/sys/fs/cgroup";
    *limit_file = "memory.max";
    // Children get the memory controller only if the root hands it down.
    std::ofstream("/sys/fs/cgroup/cgroup.subtree_control") << "+memory";
    return absl::OkStatus();
  }
  if (Exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
    *root = "/sys/fs/cgroup/memory";
    *limit_file = "memory.limit_in_bytes";
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      "this machine has no memory cgroup (neither cgroup v2's memory "
      "controller in /sys/fs/cgroup nor v1's /sys/fs/cgroup/memory)");
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  ScopedFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() || write(fd.get(), text.data(), text.size()) !=
                         static_cast<ssize_t>(text.size())) {
    return absl::PermissionDeniedError(
        StrCat("cannot write ", text, " to ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MemoryLimit> MemoryLimit::Apply(const std::string& name,
                                               uint64_t bytes,
                                               const std::string& root) {
  std::string hierarchy = root;
  std::string limit_file;
  if (hierarchy.empty()) {
    if (absl::Status found = FindHierarchy(&hierarchy, &limit_file);
        !found.ok()) {
      return found;
    }
  } else {
    limit_file = Exists(StrCat(root, "/memory.limit_in_bytes"))
                     ? "memory.limit_in_bytes"
                     : "memory.max";
  }
  const std::string directory = StrCat(hierarchy, "/aos_", name);
  if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(StrCat(
        "cannot make the memory cgroup ", directory, ": ", strerror(errno)));
  }
  if (absl::Status written =
          WriteFile(StrCat(directory, "/", limit_file), StrCat(bytes));
      !written.ok()) {
    return written;
  }
  const std::string procs = StrCat(directory, "/cgroup.procs");
  ScopedFd fd(open(procs.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::PermissionDeniedError(
        StrCat("cannot open ", procs, ": ", strerror(errno)));
  }
  return MemoryLimit(directory, std::move(fd));
}

}  // namespace aos::starter
