#include "aos/util/cpu_latency_limit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "aos/util/cpu_set.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// The two byte ranges of a per-CPU lock file: byte 0 serialises holders
// while they read and write the CPU's value; every holder keeps a shared
// lock on byte 1 for as long as it holds, so the last one can tell.
constexpr off_t kMutexByte = 0;
constexpr off_t kHolderByte = 1;

int OfdLock(int fd, short type, off_t byte, bool wait) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
}

// Whether a process other than the one holding `fd` holds byte `byte`.
bool OthersHold(int fd, off_t byte) {
  struct flock lock = {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return true;  // Keep it held.
  return lock.l_type != F_UNLCK;
}

std::string ErrnoText() { return strerror(errno); }

// The whole content of a small file at `fd` (from its start), or of `path`.
bool ReadAll(int fd, std::string* text) {
  text->clear();
  char buffer[64];
  off_t offset = 0;
  while (true) {
    const ssize_t n = pread(fd, buffer, sizeof(buffer), offset);
    if (n < 0) return false;
    if (n == 0) return true;
    text->append(buffer, static_cast<size_t>(n));
    offset += n;
  }
}

bool ReadFile(const std::string& path, std::string* text) {
  const ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  const bool ok = ReadAll(fd.get(), text);
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) {
    text->pop_back();
  }
  return ok;
}

// O_TRUNC as a shell's `>`: sysfs ignores it, a regular file needs it.
bool WriteFile(const std::string& path, std::string_view text) {
  const ScopedFd fd(open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (!fd.valid()) return false;
  // errno stays write()'s: ScopedFd's close keeps it.
  return write(fd.get(), text.data(), text.size()) ==
         static_cast<ssize_t>(text.size());
}

// pm_qos_resume_latency_us speaks its own language: "n/a" is a limit of
// 0 us, and "0" is no limit at all.
int64_t ResumeLatencyLimitUs(std::string_view text) {
  if (text == "n/a") return 0;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return INT64_MAX;  // Unknown: treat as no limit.
    value = value * 10 + (c - '0');
    if (value > INT32_MAX) return INT64_MAX;
  }
  return value == 0 ? INT64_MAX : value;
}

std::string ResumeLatencyText(int32_t limit_us) {
  return limit_us == 0 ? "n/a" : StrCat(limit_us);
}

std::string ValuePath(const CpuLatencyLimit::Paths& paths, int cpu) {
  return StrCat(paths.sysfs_cpus, "/cpu", cpu,
                "/power/pm_qos_resume_latency_us");
}

std::string LockPath(const CpuLatencyLimit::Paths& paths, int cpu) {
  return StrCat(paths.lock_dir, "/cpu", cpu);
}

// The lock directory, usable by every user allowed to write the CPU files
// (sticky and world-writable, as /run/lock itself).
bool MakeLockDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 01777) == 0) {
    return chmod(dir.c_str(), 01777) == 0;  // Past the umask.
  }
  return errno == EEXIST;
}

// Empties a lock file once its recorded value is restored (or was never
// changed). If that fails, the value stays recorded and the next holder
// restores the same value again: harmless.
void ForgetRecorded(int lock_fd) {
  if (ftruncate(lock_fd, 0) != 0) return;
}

constexpr std::string_view kGrantAdvice =
    "run as root, or have an administrator let this user write it";

}  // namespace

CpuLatencyLimit::CpuLatencyLimit(int32_t limit_us, std::string cpus,
                                 ScopedFd dma_latency_fd,
                                 std::vector<HeldCpu> held_cpus)
    : limit_us_(limit_us),
      cpus_(std::move(cpus)),
      dma_latency_fd_(std::move(dma_latency_fd)),
      held_cpus_(std::move(held_cpus)) {}

CpuLatencyLimit::~CpuLatencyLimit() {
  // dma_latency_fd_ closes as a member, which ends its limit.
  for (HeldCpu& held : held_cpus_) ReleaseCpu(held);
}

absl::StatusOr<std::unique_ptr<CpuLatencyLimit>>
CpuLatencyLimit::HoldForAllCpus(int32_t limit_us, const Paths& paths) {
  if (limit_us < 0 || limit_us > kMaxLimitUs) {
    return absl::InvalidArgumentError(StrCat(
        "CPU latency limit ", limit_us, " us is outside 0..", kMaxLimitUs));
  }
  ScopedFd fd(open(paths.cpu_dma_latency.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::PermissionDeniedError(StrCat("cannot open ",
                                              paths.cpu_dma_latency,
                                              " to limit CPU wakeup "
                                              "latency: ",
                                              ErrnoText(), "; ", kGrantAdvice));
  }
  if (write(fd.get(), &limit_us, sizeof(limit_us)) != sizeof(limit_us)) {
    return absl::InternalError(
        StrCat("cannot write ", paths.cpu_dma_latency, ": ", ErrnoText()));
  }
  return std::unique_ptr<CpuLatencyLimit>(
      new CpuLatencyLimit(limit_us, "all", std::move(fd), {}));
}

bool CpuLatencyLimit::PerCpuAvailable(const cpu_set_t& cpus,
                                      const Paths& paths) {
  if (CPU_COUNT(&cpus) == 0) return false;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    if (access(ValuePath(paths, cpu).c_str(), W_OK) != 0) return false;
  }
  return MakeLockDir(paths.lock_dir) &&
         access(paths.lock_dir.c_str(), W_OK | X_OK) == 0;
}

absl::StatusOr<std::unique_ptr<CpuLatencyLimit>> CpuLatencyLimit::HoldForCpus(
    int32_t limit_us, const cpu_set_t& cpus, const Paths& paths) {
  if (limit_us < 0 || limit_us > kMaxLimitUs) {
    return absl::InvalidArgumentError(StrCat(
        "CPU latency limit ", limit_us, " us is outside 0..", kMaxLimitUs));
  }
  if (CPU_COUNT(&cpus) == 0) {
    return absl::InvalidArgumentError("no CPU to limit the latency of");
  }
  if (!MakeLockDir(paths.lock_dir)) {
    return absl::PermissionDeniedError(StrCat(
        "cannot make ", paths.lock_dir, ": ", ErrnoText(), "; ", kGrantAdvice));
  }
  std::vector<HeldCpu> held;
  auto fail = [&](std::string message) {
    for (HeldCpu& cpu : held) ReleaseCpu(cpu);
    return absl::PermissionDeniedError(std::move(message));
  };
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    const std::string value_path = ValuePath(paths, cpu);
    const std::string lock_path = LockPath(paths, cpu);
    ScopedFd lock_file(
        open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    const int lock_fd = lock_file.get();
    if (!lock_file.valid()) {
      return fail(StrCat("cannot open ", lock_path, ": ", ErrnoText(), "; ",
                         kGrantAdvice));
    }
    if (OfdLock(lock_fd, F_WRLCK, kMutexByte, /*wait=*/true) != 0) {
      return fail(StrCat("cannot lock ", lock_path, ": ", ErrnoText()));
    }
    // The first holder records what it found, for the last one to restore.
    std::string recorded;
    std::string current;
    std::string error;
    if (!ReadAll(lock_fd, &recorded) || !ReadFile(value_path, &current)) {
      error = StrCat("cannot read ", value_path, ": ", ErrnoText(), "; ",
                     kGrantAdvice);
    } else if (recorded.empty() &&
               pwrite(lock_fd, current.data(), current.size(), 0) !=
                   static_cast<ssize_t>(current.size())) {
      error = StrCat("cannot write ", lock_path, ": ", ErrnoText());
    } else if (limit_us < ResumeLatencyLimitUs(current) &&
               !WriteFile(value_path, ResumeLatencyText(limit_us))) {
      error = StrCat("cannot write ", value_path, ": ", ErrnoText(), "; ",
                     kGrantAdvice);
      if (recorded.empty()) ForgetRecorded(lock_fd);
    } else if (OfdLock(lock_fd, F_RDLCK, kHolderByte, /*wait=*/false) != 0) {
      error = StrCat("cannot lock ", lock_path, ": ", ErrnoText());
    }
    OfdLock(lock_fd, F_UNLCK, kMutexByte, /*wait=*/false);
    if (!error.empty()) {
      lock_file.reset();
      return fail(std::move(error));
    }
    held.push_back({cpu, value_path, std::move(lock_file)});
  }
  return std::unique_ptr<CpuLatencyLimit>(new CpuLatencyLimit(
      limit_us, FormatCpuList(cpus), ScopedFd(), std::move(held)));
}

void CpuLatencyLimit::ReleaseCpu(HeldCpu& held) {
  // Under the mutex, so two holders releasing at once cannot both believe
  // the other one stays.
  const int lock_fd = held.lock_fd.get();
  OfdLock(lock_fd, F_WRLCK, kMutexByte, /*wait=*/true);
  OfdLock(lock_fd, F_UNLCK, kHolderByte, /*wait=*/false);
  if (!OthersHold(lock_fd, kHolderByte)) {
    std::string recorded;
    if (ReadAll(lock_fd, &recorded) && !recorded.empty() &&
        WriteFile(held.value_path, recorded)) {
      ForgetRecorded(lock_fd);
    }
  }
  held.lock_fd.reset();  // Also drops the mutex.
}

std::string CpuLatencyLimit::ToString() const {
  if (dma_latency_fd_.valid()) {
    return StrCat(limit_us_, " us on all CPUs (/dev/cpu_dma_latency)");
  }
  return StrCat(limit_us_, " us on CPUs ", cpus_,
                " (pm_qos_resume_latency_us)");
}

}  // namespace aos
