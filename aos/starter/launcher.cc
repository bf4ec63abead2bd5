#include "aos/starter/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "aos/starter/spawn.h"
#include "aos/util/exit_code.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos::starter {
namespace {

using std::chrono::steady_clock;

// The last `count` lines of the file at `path` (all of a shorter one).
std::string LastLines(const std::string& path, int count) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > static_cast<size_t>(count)) lines.erase(lines.begin());
  }
  return StrJoin(lines, "\n");
}

}  // namespace

struct Launcher::Child {
  LaunchSpec spec;
  pid_t pid = -1;
  std::string stderr_path;
  bool reported = false;
  bool exited = false;
  int exit_status = 0;
};

Launcher::Launcher(EventLoop* reports_loop, std::string output_dir)
    : reports_(reports_loop->MakeFetcher<timing::Report>("/aos")),
      output_dir_(std::move(output_dir)) {}

Launcher::~Launcher() { StopAll(std::chrono::seconds(5)); }

absl::Status Launcher::Start(LaunchSpec spec) {
  if (Find(spec.name) != nullptr) {
    return absl::AlreadyExistsError(StrCat(spec.name, ": already started"));
  }
  auto child = std::make_unique<Child>();
  child->spec = std::move(spec);
  const LaunchSpec& started = child->spec;
  SpawnOptions options;
  options.binary = started.binary;
  options.args = started.args;
  ScopedFd stdout_fd, stderr_fd, netns_fd;
  if (output_dir_.empty()) {
    // Both to our stderr: our stdout is the caller's (a streamer's table,
    // JSON lines).
    options.stdout_fd = STDERR_FILENO;
  } else {
    const std::string stem = StrCat(output_dir_, "/", started.name);
    child->stderr_path = stem + ".err";
    stdout_fd.reset(open((stem + ".out").c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    stderr_fd.reset(open(child->stderr_path.c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!stdout_fd.valid() || !stderr_fd.valid()) {
      return absl::FailedPreconditionError(
          StrCat(started.name, ": cannot write its output in ", output_dir_,
                 ": ", strerror(errno)));
    }
    options.stdout_fd = stdout_fd.get();
    options.stderr_fd = stderr_fd.get();
  }
  if (!started.network_namespace.empty()) {
    const std::string path = StrCat("/run/netns/", started.network_namespace);
    netns_fd.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!netns_fd.valid()) {
      return absl::NotFoundError(StrCat(started.name, ": network namespace ",
                                        started.network_namespace, " (", path,
                                        "): ", strerror(errno)));
    }
    options.network_namespace_fd = netns_fd.get();
  }
  absl::StatusOr<pid_t> pid = Spawn(options);
  if (!pid.ok()) {
    return absl::Status(pid.status().code(),
                        StrCat(started.name, ": ", pid.status().message(),
                               started.network_namespace.empty()
                                   ? ""
                                   : StrCat(" (in network namespace ",
                                            started.network_namespace, ")")));
  }
  child->pid = *pid;
  children_.push_back(std::move(child));
  return absl::OkStatus();
}

Launcher::Child* Launcher::Find(std::string_view name) const {
  for (const std::unique_ptr<Child>& child : children_) {
    if (child->spec.name == name) return child.get();
  }
  return nullptr;
}

bool Launcher::Reap(Child* child) {
  if (child->exited) return true;
  int status = 0;
  pid_t got;
  do {
    got = waitpid(child->pid, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got != child->pid) return false;
  child->exited = true;
  child->exit_status = ExitCodeOf(status);
  return true;
}

absl::Status Launcher::WaitUntilReporting(std::chrono::nanoseconds deadline) {
  const steady_clock::time_point end = steady_clock::now() + deadline;
  while (true) {
    while (reports_.FetchNext()) {
      const flatbuffers::String* name = reports_->name();
      if (name == nullptr) continue;
      Child* child = Find(name->string_view());
      if (child != nullptr) child->reported = true;
    }
    std::vector<std::string> silent;
    for (const std::unique_ptr<Child>& child : children_) {
      if (child->reported) continue;
      if (Reap(child.get())) {
        std::string said =
            child->stderr_path.empty() ? "" : LastLines(child->stderr_path, 5);
        return absl::FailedPreconditionError(
            StrCat(child->spec.name, " ", DescribeExit(child->exit_status),
                   child->spec.reports ? " before its first timing report"
                                       : " as it started",
                   said.empty() ? "" : StrCat("; it said:\n", said)));
      }
      if (child->spec.reports) silent.push_back(child->spec.name);
    }
    if (silent.empty()) return absl::OkStatus();
    if (steady_clock::now() >= end) {
      return absl::DeadlineExceededError(
          StrCat("no timing report within ",
                 std::chrono::duration<double>(deadline).count(), " s from ",
                 StrJoin(silent, ", "),
                 " (running, but silent: is --timing_report_ms long, or "
                 "--shm_base not the launcher's?)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Launcher::Running(std::string_view name) {
  Child* child = Find(name);
  return child != nullptr && !Reap(child);
}

pid_t Launcher::Pid(std::string_view name) const {
  const Child* child = Find(name);
  return child == nullptr ? -1 : child->pid;
}

std::string Launcher::Stderr(std::string_view name) const {
  const Child* child = Find(name);
  if (child == nullptr || child->stderr_path.empty()) return "";
  std::ifstream in(child->stderr_path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<Launcher::Stopped> Launcher::StopAll(
    std::chrono::nanoseconds stop_time) {
  std::vector<Stopped> stopped;
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    Child* child = it->get();
    if (child->pid < 0) continue;
    Stopped fate{.name = child->spec.name};
    if (!Reap(child)) {
      const StoppedProcess ended = StopProcessGroup(child->pid, stop_time);
      fate.killed = ended.killed;
      child->exited = true;
      child->exit_status = ExitCodeOf(ended.wait_status);
    }
    fate.status = child->exit_status;
    child->pid = -1;
    stopped.push_back(std::move(fate));
  }
  return stopped;
}

}  // namespace aos::starter
