#include "aos/testing/small_filesystem.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::testing {
namespace {

std::string Filler(const std::string& directory) {
  return directory + "/filler";
}

}  // namespace

absl::Status MountSmallTmpfs(const std::string& directory, size_t bytes) {
  std::filesystem::create_directories(directory);
  if (unshare(CLONE_NEWNS) != 0) {
    return absl::PermissionDeniedError(
        StrCat("cannot make a mount namespace for a small tmpfs (unshare: ",
               strerror(errno), "); the test needs root (CAP_SYS_ADMIN)"));
  }
  // Our mounts must not propagate to the namespace we came from.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return absl::PermissionDeniedError(StrCat(
        "cannot make this test's mounts private (mount: ", strerror(errno),
        ")"));
  }
  const std::string options = StrCat("size=", bytes, ",mode=0700");
  if (mount("tmpfs", directory.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
            options.c_str()) != 0) {
    return absl::PermissionDeniedError(StrCat("cannot mount a ", bytes,
                                              "-byte tmpfs on ", directory,
                                              ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

void FillFilesystem(const std::string& directory, size_t leave_bytes) {
  const std::string path = Filler(directory);
  const ScopedFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600));
  PCHECK(fd.valid()) << path;
  const std::vector<char> page(4096, 'x');
  while (write(fd.get(), page.data(), page.size()) > 0) {
  }
  CHECK_EQ(errno, ENOSPC) << "filling " << path;
  struct stat st;
  PCHECK(fstat(fd.get(), &st) == 0);
  const off_t give_back = static_cast<off_t>((leave_bytes + page.size() - 1) /
                                             page.size() * page.size());
  PCHECK(ftruncate(fd.get(), std::max<off_t>(0, st.st_size - give_back)) == 0);
}

void RemoveFiller(const std::string& directory) {
  unlink(Filler(directory).c_str());
}

size_t FreeBytes(const std::string& directory) {
  struct statvfs fs;
  PCHECK(statvfs(directory.c_str(), &fs) == 0) << directory;
  return static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace aos::testing
