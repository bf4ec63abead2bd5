#include "aos/tracing/ring_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

absl::Status PathError(std::string_view path, std::string_view what) {
  return absl::UnavailableError(
      StrCat(path, ": ", what, ": ", strerror(errno)));
}

// A ring in a mapping of its file, which it unmaps and removes.
class FileRing : public EventRing {
 public:
  FileRing(void* memory, size_t bytes, uint32_t capacity,
           const RingIdentity& identity, std::string path)
      : EventRing(memory, capacity, identity),
        memory_(memory),
        bytes_(bytes),
        path_(std::move(path)) {}
  ~FileRing() override {
    unlink(path_.c_str());
    munmap(memory_, bytes_);
  }

 private:
  void* const memory_;
  const size_t bytes_;
  const std::string path_;
};

// The pid a ring file's name ends in, or 0.
int PidOfRingFile(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return 0;
  const std::string digits(name.substr(dot + 1));
  char* end = nullptr;
  const long pid = strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || pid <= 0) return 0;
  return static_cast<int>(pid);
}

}  // namespace

std::string RingDirectory(std::string_view shm_base) {
  return StrCat(shm_base, "/aos_trace");
}

absl::StatusOr<std::unique_ptr<EventRing>> CreateRingFile(
    std::string_view shm_base, uint32_t capacity,
    const RingIdentity& identity) {
  const std::string directory = RingDirectory(shm_base);
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return absl::UnavailableError(
        StrCat(directory, ": cannot make it: ", error.message()));
  }
  chmod(directory.c_str(), 01777);
  const std::string path =
      StrCat(directory, "/", identity.node.empty() ? "-" : identity.node, ".",
             identity.application, ".", identity.pid);
  unlink(path.c_str());
  const int fd =
      open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return PathError(path, "cannot create it");
  const size_t bytes = RingBytes(capacity);
  // posix_fallocate: a full tmpfs fails here, not with SIGBUS later.
  const int allocated = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (allocated != 0) {
    errno = allocated;
    const absl::Status status = PathError(path, "cannot size it");
    close(fd);
    unlink(path.c_str());
    return status;
  }
  void* memory =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (memory == MAP_FAILED) {
    errno = map_errno;
    unlink(path.c_str());
    return PathError(path, "cannot map it");
  }
  return std::unique_ptr<EventRing>(
      new FileRing(memory, bytes, capacity, identity, path));
}

std::vector<std::string> ListRingFiles(std::string_view shm_base, int* pruned) {
  std::vector<std::string> paths;
  std::error_code error;
  std::filesystem::directory_iterator it(RingDirectory(shm_base), error);
  if (error) return paths;
  for (const std::filesystem::directory_entry& entry : it) {
    if (!entry.is_regular_file(error)) continue;
    const std::string path = entry.path().string();
    const int pid = PidOfRingFile(entry.path().filename().string());
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
      if (unlink(path.c_str()) == 0 && pruned != nullptr) ++*pruned;
      continue;
    }
    paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

MappedRing::MappedRing(MappedRing&& other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedRing::~MappedRing() {
  if (data_ != nullptr) {
    munmap(const_cast<std::byte*>(data_), size_);
  }
}

absl::StatusOr<MappedRing> MapRing(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PathError(path, "cannot open it");
  struct stat status;
  if (fstat(fd, &status) != 0) {
    const absl::Status error = PathError(path, "cannot stat it");
    close(fd);
    return error;
  }
  if (status.st_size <= 0) {
    close(fd);
    return absl::DataLossError(StrCat(path, ": empty"));
  }
  const size_t bytes = static_cast<size_t>(status.st_size);
  void* memory = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (memory == MAP_FAILED) {
    errno = map_errno;
    return PathError(path, "cannot map it");
  }
  return MappedRing(static_cast<const std::byte*>(memory), bytes);
}

}  // namespace aos::tracing
