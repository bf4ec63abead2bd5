// Proving a watcher registration before signalling it (watcher_proof.h).
// Raw syscalls and stack buffers only: this runs inside Send's Wakeup, on
// the realtime path, the first time a sender meets a registration.

#include "aos/ipc_lib/watcher_proof.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <utility>

#include "aos/util/scoped_fd.h"

namespace aos::ipc_lib::internal {
namespace {

// From linux/pidfd.h of kernels 6.9+, which Debian bookworm's headers
// predate. PIDFD_THREAD is O_EXCL.
constexpr unsigned int kPidfdThread = O_EXCL;
constexpr unsigned int kPidfdSignalThread = 1u << 0;

std::atomic<bool> maps_unreadable_for_testing{false};

// Reads up to size - 1 bytes of `path` into `buffer` and NUL-terminates it.
// Returns the bytes read, or -errno.
ssize_t ReadSmallFile(const char* path, char* buffer, size_t size) {
  const ScopedFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return -errno;
  size_t total = 0;
  while (total + 1 < size) {
    const ssize_t n = read(fd.get(), buffer + total, size - 1 - total);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
  }
  buffer[total] = '\0';
  return static_cast<ssize_t>(total);
}

// The value after "<key>:" at the start of a line of a /proc status file,
// or null.
const char* StatusField(const char* status, const char* key) {
  const size_t length = strlen(key);
  for (const char* line = status; line != nullptr && *line != '\0';) {
    if (strncmp(line, key, length) == 0 && line[length] == ':') {
      const char* value = line + length + 1;
      while (*value == ' ' || *value == '\t') ++value;
      return value;
    }
    line = strchr(line, '\n');
    if (line != nullptr) ++line;
  }
  return nullptr;
}

// Whether /proc/<pid>/task/<tid>/status says the thread belongs to `pid`
// and blocks `signal`. Sets *why when not.
bool ThreadBlocksSignal(pid_t pid, pid_t tid, int signal, const char** why) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
  char status[8192];
  if (ReadSmallFile(path, status, sizeof(status)) <= 0) {
    *why = "is not a thread of that process";
    return false;
  }
  const char* tgid = StatusField(status, "Tgid");
  if (tgid == nullptr || strtol(tgid, nullptr, 10) != pid) {
    *why = "is not a thread of that process";
    return false;
  }
  const char* blocked = StatusField(status, "SigBlk");
  if (blocked == nullptr) {
    *why = "has no readable signal mask";
    return false;
  }
  // 64 bits of hex, signal n is bit n - 1.
  const unsigned long long mask = strtoull(blocked, nullptr, 16);
  if (signal < 1 || signal > 64 || (mask & (1ull << (signal - 1))) == 0) {
    *why = "does not block the wakeup signal (it is not waiting for it)";
    return false;
  }
  return true;
}

// Parses "<hex>:<hex> <decimal>" at `fields` (the device and inode of a maps
// line ending at `end`) and compares them with `file`.
bool MapsFieldsName(const char* fields, const char* end, const FileId& file) {
  char* after = nullptr;
  const unsigned long major_number = strtoul(fields, &after, 16);
  if (after >= end || *after != ':') return false;
  const unsigned long minor_number = strtoul(after + 1, &after, 16);
  if (after >= end || *after != ' ') return false;
  const unsigned long long inode = strtoull(after + 1, &after, 10);
  if (after > end) return false;
  return major_number == major(file.device) &&
         minor_number == minor(file.device) && inode == file.inode;
}

// Whether a line of /proc/<pid>/maps ("start-end perms offset dev inode
// path") maps `file`.
bool MapsLineNames(const char* line, const char* end, const FileId& file) {
  const char* field = line;
  for (int skip = 0; skip < 3; ++skip) {
    field = static_cast<const char*>(memchr(field, ' ', end - field));
    if (field == nullptr) return false;
    ++field;
  }
  return MapsFieldsName(field, end, file);
}

// Whether thread `robust_id` of `pid` is the thread that holds an aos
// process's robust list (process_robust_list.h).
bool IsAosRobustListThread(pid_t pid, uint32_t robust_id) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", pid, robust_id);
  char name[32];
  if (ReadSmallFile(path, name, sizeof(name)) <= 0) return false;
  return strcmp(name, "aos_robust_list\n") == 0;
}

int OpenThreadPidfd(pid_t tid) {
  return static_cast<int>(syscall(SYS_pidfd_open, tid, kPidfdThread));
}

}  // namespace

MapsAnswer ProcessMapsFile(pid_t pid, const FileId& file) {
  if (maps_unreadable_for_testing.load(std::memory_order_relaxed)) {
    return MapsAnswer::kUnreadable;
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/maps", pid);
  const ScopedFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return errno == EACCES || errno == EPERM ? MapsAnswer::kUnreadable
                                             : MapsAnswer::kDoesNotMap;
  }
  // Whole lines are parsed; a partial one moves to the front. A line longer
  // than the buffer (a path of thousands of bytes) is skipped.
  char buffer[8192];
  size_t held = 0;
  bool skipping_long_line = false;
  MapsAnswer answer = MapsAnswer::kDoesNotMap;
  while (answer == MapsAnswer::kDoesNotMap) {
    const ssize_t n = read(fd.get(), buffer + held, sizeof(buffer) - held);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EACCES || errno == EPERM) answer = MapsAnswer::kUnreadable;
      break;
    }
    if (n == 0) break;
    held += static_cast<size_t>(n);
    size_t start = 0;
    while (true) {
      const char* newline =
          static_cast<const char*>(memchr(buffer + start, '\n', held - start));
      if (newline == nullptr) break;
      if (!skipping_long_line && MapsLineNames(buffer + start, newline, file)) {
        answer = MapsAnswer::kMaps;
        break;
      }
      skipping_long_line = false;
      start = static_cast<size_t>(newline - buffer) + 1;
    }
    if (start == 0 && held == sizeof(buffer)) {
      // One line fills the buffer: drop it up to its end.
      skipping_long_line = true;
      held = 0;
    } else {
      memmove(buffer, buffer + start, held - start);
      held -= start;
    }
  }
  return answer;
}

WatcherProof ProveWatcher(pid_t pid, pid_t tid, uint32_t robust_id,
                          int signal) {
  WatcherProof proof;
  if (pid <= 0 || tid <= 0) {
    proof.why = "names no process";
    return proof;
  }
  ScopedFd pidfd(OpenThreadPidfd(tid));
  if (!pidfd.valid() && errno == ESRCH) {
    proof.verdict = WatcherProof::Verdict::kGone;
    return proof;
  }
  // EINVAL: no thread pidfds on this kernel; EMFILE and the like: no fd.
  // Prove it all the same, and let the caller use tgkill.
  // pidfd closes on the way out.
  auto refuse = [&](const char* why) {
    proof.verdict = WatcherProof::Verdict::kRefused;
    proof.why = why;
    return std::move(proof);
  };
  const char* why = "";
  if (!ThreadBlocksSignal(pid, tid, signal, &why)) return refuse(why);
  if (!IsAosRobustListThread(pid, robust_id)) {
    return refuse(
        "holds no aos slots under the id in the registration (it is not an "
        "aos process)");
  }
  // Alive now, so alive throughout: everything above was about this thread,
  // not a newcomer with its tid.
  const int alive =
      pidfd.valid()
          ? static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd.get(), 0,
                                     nullptr, kPidfdSignalThread))
          : static_cast<int>(syscall(SYS_tgkill, pid, tid, 0));
  if (alive != 0 && errno == ESRCH) {
    proof.verdict = WatcherProof::Verdict::kGone;
    return proof;
  }
  proof.verdict = WatcherProof::Verdict::kProven;
  proof.pidfd = std::move(pidfd);
  return proof;
}

int SignalWatcher(int pidfd, pid_t pid, pid_t tid, int signal) {
  const long result = pidfd >= 0 ? syscall(SYS_pidfd_send_signal, pidfd, signal,
                                           nullptr, kPidfdSignalThread)
                                 : syscall(SYS_tgkill, pid, tid, signal);
  return result == 0 ? 0 : errno;
}

void ProcessName(pid_t process, char* out, size_t size) {
  if (size == 0) return;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/comm", process);
  char name[64];
  const ssize_t n = ReadSmallFile(path, name, sizeof(name));
  if (n <= 0) {
    snprintf(out, size, "?");
    return;
  }
  size_t written = 0;
  for (ssize_t i = 0; i < n && written + 5 < size; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c == '\n' && i == n - 1) break;
    if (c >= 0x20 && c <= 0x7e && c != '\\' && c != '"') {
      out[written++] = static_cast<char>(c);
    } else {
      written += static_cast<size_t>(
          snprintf(out + written, size - written, "\\x%02x", c));
    }
  }
  out[written] = '\0';
}

void SetMapsUnreadableForTesting(bool unreadable) {
  maps_unreadable_for_testing.store(unreadable, std::memory_order_relaxed);
}

}  // namespace aos::ipc_lib::internal
