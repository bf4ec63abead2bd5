#include "aos/tracing/sched_recorder.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

constexpr std::string_view kPrefix = "aos_trace.";

absl::Status WriteTo(const std::string& path, std::string_view value) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    return absl::PermissionDeniedError(StrCat(path, ": ", strerror(errno)));
  }
  const ssize_t written = write(fd, value.data(), value.size());
  const int error = errno;
  close(fd);
  if (written != static_cast<ssize_t>(value.size())) {
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot write ", value, ": ", strerror(error)));
  }
  return absl::OkStatus();
}

// Stops an instance's tracing and removes it; quiet, for cleanup.
void RemoveInstance(const std::string& directory) {
  (void)WriteTo(StrCat(directory, "/tracing_on"), "0");
  (void)WriteTo(StrCat(directory, "/events/enable"), "0");
  rmdir(directory.c_str());
}

// The instances this process made and has not removed yet, for exit().
std::mutex live_mutex;
std::set<std::string>& LiveInstances() {
  static auto* live = new std::set<std::string>();
  return *live;
}

void RemoveLiveInstances() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (const std::string& directory : LiveInstances()) {
    RemoveInstance(directory);
  }
  LiveInstances().clear();
}

// Removes `aos_trace.<pid>` instances whose recorder is gone (killed).
void RemoveOrphans(const std::string& instances) {
  DIR* dir = opendir(instances.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kPrefix)) continue;
    const long pid = strtol(entry->d_name + kPrefix.size(), nullptr, 10);
    if (pid <= 0 || pid == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
    RemoveInstance(StrCat(instances, "/", name));
  }
  closedir(dir);
}

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

std::string FindTracefs() {
  for (const char* path :
       {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    struct stat info;
    if (stat(StrCat(path, "/instances").c_str(), &info) == 0) return path;
  }
  return "/sys/kernel/tracing";
}

absl::StatusOr<std::unique_ptr<SchedRecorder>> SchedRecorder::Start(
    std::string_view tracefs, int buffer_kb) {
  const std::string instances = StrCat(tracefs, "/instances");
  struct stat info;
  if (stat(instances.c_str(), &info) != 0 &&
      stat(std::string(tracefs).c_str(), &info) == 0) {
    // Not mounted here, as in `ip netns exec`, which remounts /sys: mount
    // it (trace-cmd does the same). Failing, the mkdir below says why.
    mount("nodev", std::string(tracefs).c_str(), "tracefs", 0, nullptr);
  }
  RemoveOrphans(instances);
  const std::string directory = StrCat(instances, "/", kPrefix, getpid());
  if (mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    const int error = errno;
    return absl::PermissionDeniedError(
        StrCat(directory, ": ", strerror(error),
               error == ENOENT                     ? " (is tracefs mounted?)"
               : error == EACCES || error == EPERM ? " (needs root)"
                                                   : ""));
  }
  {
    std::lock_guard<std::mutex> lock(live_mutex);
    static const bool registered = std::atexit(RemoveLiveInstances) == 0;
    (void)registered;
    LiveInstances().insert(directory);
  }
  std::unique_ptr<SchedRecorder> recorder(
      new SchedRecorder(directory, MonotonicNs()));
  const std::pair<std::string, std::string> settings[] = {
      {"tracing_on", "0"},
      {"trace_clock", "mono"},
      {"buffer_size_kb", std::to_string(buffer_kb)},
      {"options/overwrite", "1"},
      {"events/sched/sched_switch/enable", "1"},
      {"events/sched/sched_wakeup/enable", "1"},
      {"tracing_on", "1"},
  };
  for (const auto& [file, value] : settings) {
    absl::Status status = WriteTo(StrCat(directory, "/", file), value);
    if (!status.ok()) return status;
  }
  // Reading `trace` must not pause recording (a kernel option since 6.1;
  // older kernels never pause, and have no such file).
  (void)WriteTo(StrCat(directory, "/options/pause-on-trace"), "0");
  recorder->started_ns_ = MonotonicNs();
  return recorder;
}

SchedRecorder::~SchedRecorder() {
  RemoveInstance(directory_);
  std::lock_guard<std::mutex> lock(live_mutex);
  LiveInstances().erase(directory_);
}

absl::StatusOr<std::string> SchedRecorder::ReadText() const {
  const std::string path = StrCat(directory_, "/trace");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(StrCat(path, ": ", strerror(errno)));
  }
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      close(fd);
      return absl::UnavailableError(StrCat(path, ": ", strerror(error)));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return text;
}

}  // namespace aos::tracing
