#include "aos/configuration_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "aos/util/printable.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

// What a non-regular file is, for the message.
std::string_view KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The path as messages show it: escaped and bounded, so a path of a
// megabyte (an import can name one) is not echoed whole.
std::string Shown(const std::string& path) {
  return InlinePrintable(path, kPrintablePathMaxBytes);
}

absl::Status OpenError(const std::string& path, int error) {
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(StrCat(Shown(path), ": no such file"));
    case ELOOP:
      return absl::InvalidArgumentError(StrCat(
          Shown(path), ": too many levels of symbolic links (a symlink loop)"));
    case ENAMETOOLONG:
      return absl::InvalidArgumentError(StrCat(
          Shown(path), ": file name too long (", path.size(), " characters)"));
    default:
      return absl::InvalidArgumentError(
          StrCat(Shown(path), ": cannot open: ", std::strerror(error)));
  }
}

}  // namespace

absl::StatusOr<std::string> ReadConfigFileBytes(const std::string& path,
                                                int64_t max_bytes) {
  if (path.empty()) {
    return absl::InvalidArgumentError("empty file name");
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below
  // refuses it before any read.
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat info;
  if (fstat(fd.get(), &info) != 0) {
    return absl::InvalidArgumentError(
        StrCat(Shown(path), ": cannot stat: ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(StrCat(
        Shown(path), ": is ", KindOf(info.st_mode), ", not a regular file"));
  }
  if (info.st_size > max_bytes) {
    return absl::InvalidArgumentError(StrCat(
        Shown(path), ": is ", info.st_size, " bytes, more than the limit of ",
        max_bytes, " bytes for a config file"));
  }
  std::string contents(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (true) {
    if (done == contents.size()) {
      // The file may have grown since fstat; read what is there, within the
      // limit.
      if (static_cast<int64_t>(done) >= max_bytes + 1) break;
      contents.resize(std::min<size_t>(done + 4096, max_bytes + 1));
    }
    const ssize_t got =
        read(fd.get(), contents.data() + done, contents.size() - done);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InvalidArgumentError(
          StrCat(Shown(path), ": cannot read: ", std::strerror(errno)));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  contents.resize(done);
  if (static_cast<int64_t>(done) > max_bytes) {
    return absl::InvalidArgumentError(
        StrCat(Shown(path), ": grew past the limit of ", max_bytes,
               " bytes for a config file while it was read"));
  }
  return contents;
}

}  // namespace aos::configuration
