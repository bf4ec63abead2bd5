#ifndef AOS_STARTER_MEMORY_LIMIT_H_
#define AOS_STARTER_MEMORY_LIMIT_H_

// An application's memory_limit, as AOS's starter applies it: a memory
// cgroup of its own ("aos_NAME") whose limit is the application's. The
// child joins it before exec (SpawnOptions::cgroup_procs_fd), so it never
// runs outside. Over the limit, the kernel's OOM killer ends it (SIGKILL),
// and the starter restarts it as any crash.
//
//   absl::StatusOr<MemoryLimit> limit = MemoryLimit::Apply("pong", 64 << 20);
//   if (!limit.ok()) { ... }  // "no memory cgroup here", a permission
//   options.cgroup_procs_fd = limit->procs_fd();
//
// cgroup v2 (/sys/fs/cgroup with the memory controller: memory.max) or v1
// (/sys/fs/cgroup/memory: memory.limit_in_bytes); making one needs root.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aos/util/scoped_fd.h"

namespace aos::starter {

class MemoryLimit {
 public:
  // Makes (or reuses) the cgroup of application `name` under `root` (the
  // default: this machine's memory hierarchy), sets its limit to `bytes`
  // (> 0), and opens its process list. Errors say which file and why.
  static absl::StatusOr<MemoryLimit> Apply(const std::string& name,
                                           uint64_t bytes,
                                           const std::string& root = "");

  // Written "0" by the child: it joins the cgroup.
  int procs_fd() const { return procs_.get(); }
  // The cgroup's directory.
  const std::string& directory() const { return directory_; }

 private:
  MemoryLimit(std::string directory, ScopedFd procs)
      : directory_(std::move(directory)), procs_(std::move(procs)) {}

  std::string directory_;
  ScopedFd procs_;
};

}  // namespace aos::starter

#endif  // AOS_STARTER_MEMORY_LIMIT_H_
