#include "aos/starter/supervised_application.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aos/starter/memory_limit.h"
#include "aos/util/exit_code.h"
#include "aos/util/str_cat.h"

namespace aos::starter {
namespace {

// How often a start waits again for a copy started earlier to exit.
constexpr std::chrono::milliseconds kLockRetry(200);

// Counts starts across every application, so a starter stops them in the
// reverse order.
uint64_t next_start_sequence = 0;

double Seconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

// The pid written in a lock file by the starter that took it, or 0.
pid_t LockHolder(int fd) {
  char text[32] = {};
  const ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
  return got > 0 ? static_cast<pid_t>(atol(text)) : 0;
}

}  // namespace

SupervisedApplication::SupervisedApplication(ApplicationSpec spec,
                                             const SupervisorOptions* options)
    : spec_(std::move(spec)), options_(options), backoff_(options->backoff) {}

void SupervisedApplication::Start(monotonic_clock::time_point now) {
  backoff_.Reset();
  switch (state_) {
    case State::STARTING:
    case State::RUNNING:
      return;
    case State::STOPPING:
      start_after_stop_ = true;
      return;
    case State::WAITING:
    case State::STOPPED:
      waiting_is_restart_ = false;
      Launch(now);
      return;
  }
}

void SupervisedApplication::Stop(monotonic_clock::time_point now,
                                 LastStopReason reason) {
  start_after_stop_ = false;
  pending_stop_reason_ = reason;
  switch (state_) {
    case State::STARTING:
    case State::RUNNING:
      kill(-pid_, SIGTERM);
      state_ = State::STOPPING;
      kill_time_ = now + spec_.stop_time;
      return;
    case State::STOPPING:
      return;
    case State::WAITING:
    case State::STOPPED:
      state_ = State::STOPPED;
      last_stop_reason_ = reason;
      message_.clear();
      return;
  }
}

void SupervisedApplication::Restart(monotonic_clock::time_point now) {
  switch (state_) {
    case State::STARTING:
    case State::RUNNING:
      Stop(now, LastStopReason::RESTART_REQUESTED);
      start_after_stop_ = true;
      return;
    case State::STOPPING:
      start_after_stop_ = true;
      return;
    case State::WAITING:
    case State::STOPPED:
      Start(now);
      return;
  }
}

void SupervisedApplication::Launch(monotonic_clock::time_point now) {
  if (!spec_.problem.empty()) {
    state_ = State::STOPPED;
    last_stop_reason_ = LastStopReason::ERR_BAD_USER;
    message_ = spec_.problem;
    return;
  }
  const std::string lock_path = StrCat(options_->lock_dir, "/", spec_.name);
  ScopedFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid()) {
    last_stop_reason_ = LastStopReason::EXECV_ERR;
    ScheduleRestart(
        now, std::chrono::nanoseconds(0),
        StrCat("cannot open its lock file ", lock_path, ": ", strerror(errno)));
    return;
  }
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    state_ = State::WAITING;
    next_start_time_ = now + kLockRetry;
    message_ = StrCat("a copy started earlier (pid ", LockHolder(lock.get()),
                      ", lock ", lock_path,
                      ") still runs: starting it once that exits");
    return;
  }
  // AOS's memory_limit: a cgroup of its own; where none can be made, it
  // runs without, and its status says so.
  std::optional<MemoryLimit> memory_limit;
  std::string limit_problem;
  if (spec_.memory_limit > 0) {
    absl::StatusOr<MemoryLimit> applied =
        MemoryLimit::Apply(spec_.name, spec_.memory_limit);
    if (applied.ok()) {
      memory_limit.emplace(std::move(applied).value());
    } else {
      limit_problem =
          StrCat("memory_limit not enforced: ", applied.status().message());
    }
  }
  SpawnOptions options;
  if (memory_limit.has_value()) {
    options.cgroup_procs_fd = memory_limit->procs_fd();
  }
  options.binary = spec_.binary;
  options.args = spec_.args;
  options.run_as = spec_.run_as;
  options.inherited_fd = lock.get();
  absl::StatusOr<pid_t> pid = Spawn(options);
  if (!pid.ok()) {
    last_stop_reason_ = LastStopReason::EXECV_ERR;
    ScheduleRestart(now, std::chrono::nanoseconds(0),
                    std::string(pid.status().message()));
    return;
  }
  const std::string holder = StrCat(*pid, "\n");
  if (ftruncate(lock.get(), 0) != 0 ||
      pwrite(lock.get(), holder.data(), holder.size(), 0) < 0) {
    // Only the message of a later starter loses the pid.
  }
  pidfd_.reset(static_cast<int>(syscall(SYS_pidfd_open, *pid, 0)));
  if (!pidfd_.valid()) {
    // Without a pidfd its exit would go unseen (Linux before 5.3): it
    // does not run unsupervised.
    const int error = errno;
    kill(-*pid, SIGKILL);
    int ignored;
    while (waitpid(*pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    state_ = State::STOPPED;
    last_stop_reason_ = LastStopReason::EXECV_ERR;
    message_ = StrCat("cannot watch it (pidfd_open: ", strerror(error),
                      "; the starter needs Linux 5.3 or later)");
    return;
  }
  pid_ = *pid;
  state_ = State::RUNNING;
  ++id_;
  start_sequence_ = ++next_start_sequence;
  last_start_time_ = now;
  if (waiting_is_restart_) ++restarts_;
  waiting_is_restart_ = false;
  message_ = limit_problem;
  usage_.reset();
  cpu_share_ = 0;
}

void SupervisedApplication::ScheduleRestart(monotonic_clock::time_point now,
                                            std::chrono::nanoseconds run_time,
                                            const std::string& what_happened) {
  if (!spec_.autorestart) {
    state_ = State::STOPPED;
    message_ = StrCat(what_happened, "; not restarted (autorestart is off)");
    return;
  }
  const std::chrono::nanoseconds wait = backoff_.OnExit(run_time);
  state_ = State::WAITING;
  waiting_is_restart_ = true;
  next_start_time_ = now + wait;
  const int quick = backoff_.quick_exits_in_a_row();
  if (quick == 0) {
    message_ = what_happened;
    return;
  }
  message_ = StrCat(
      what_happened, " within ", Seconds(backoff_.options().healthy_after),
      " s of its start, ", quick, quick == 1 ? " time" : " times in a row",
      ": next start in ", Seconds(wait), " s");
}

void SupervisedApplication::OnExit(monotonic_clock::time_point now,
                                   int wait_status) {
  pidfd_.reset();
  pid_ = 0;
  usage_.reset();
  cpu_share_ = 0;
  const int code = ExitCodeOf(wait_status);
  last_exit_ = code;
  last_exit_code_ = static_cast<uint8_t>(code >= 0 ? code : -code);
  last_exit_signal_ = code < 0 ? -code : 0;
  if (state_ == State::STOPPING) {
    state_ = State::STOPPED;
    last_stop_reason_ = pending_stop_reason_;
    message_.clear();
    if (start_after_stop_) {
      start_after_stop_ = false;
      Start(now);
    }
    return;
  }
  last_stop_reason_ = LastStopReason::CRASH;
  ScheduleRestart(now, now - last_start_time_, DescribeExit(code));
}

void SupervisedApplication::Tick(monotonic_clock::time_point now) {
  if (state_ == State::WAITING && now >= next_start_time_) {
    Launch(now);
  } else if (state_ == State::STOPPING && now >= kill_time_) {
    kill(-pid_, SIGKILL);
    kill_time_ = monotonic_clock::max_time;
  }
}

std::optional<monotonic_clock::time_point> SupervisedApplication::NextDeadline()
    const {
  if (state_ == State::WAITING) return next_start_time_;
  if (state_ == State::STOPPING && kill_time_ != monotonic_clock::max_time) {
    return kill_time_;
  }
  return std::nullopt;
}

void SupervisedApplication::SampleUsage() {
  if (pid_ == 0) {
    usage_.reset();
    return;
  }
  std::optional<ProcessUsage> now = ReadProcessUsage(pid_);
  if (usage_.has_value() && now.has_value()) {
    cpu_share_ = CpuShare(*usage_, *now);
  }
  usage_ = std::move(now);
}

void SupervisedApplication::StopNow() {
  if (pid_ == 0) return;
  start_after_stop_ = false;
  pending_stop_reason_ = LastStopReason::STOP_REQUESTED;
  state_ = State::STOPPING;
  OnExit(monotonic_clock::now(),
         StopProcessGroup(pid_, spec_.stop_time).wait_status);
}

void SupervisedApplication::UpdateSpec(ApplicationSpec spec,
                                       monotonic_clock::time_point now) {
  const bool differs =
      spec.RunsDifferentlyFrom(spec_) || spec.problem != spec_.problem;
  spec_ = std::move(spec);
  if (!differs) return;
  if (state_ == State::RUNNING || state_ == State::STARTING) {
    Restart(now);
  } else if (state_ == State::STOPPED &&
             last_stop_reason_ == LastStopReason::ERR_BAD_USER &&
             spec_.autostart) {
    Start(now);
  }
}

flatbuffers::Offset<ApplicationStatus> SupervisedApplication::PackStatus(
    flatbuffers::FlatBufferBuilder* fbb, bool has_active_timing_report) const {
  const flatbuffers::Offset<flatbuffers::String> name =
      fbb->CreateString(spec_.name);
  const flatbuffers::Offset<flatbuffers::String> message =
      fbb->CreateString(message_);
  flatbuffers::Offset<ProcessInfo> process_info;
  if (pid_ != 0 && usage_.has_value()) {
    const flatbuffers::Offset<flatbuffers::String> process_name =
        fbb->CreateString(usage_->name);
    ProcessInfo::Builder info(*fbb);
    info.add_pid(pid_);
    info.add_name(process_name);
    info.add_cpu_usage(cpu_share_);
    info.add_physical_memory(usage_->resident_bytes);
    process_info = info.Finish();
  }
  ApplicationStatus::Builder status(*fbb);
  status.add_name(name);
  status.add_state(state_);
  status.add_last_exit_code(last_exit_code_);
  status.add_pid(pid_);
  status.add_id(id_);
  if (id_ != 0) {
    status.add_last_start_time(last_start_time_.time_since_epoch().count());
  }
  status.add_last_stop_reason(last_stop_reason_);
  if (!process_info.IsNull()) status.add_process_info(process_info);
  status.add_has_active_timing_report(has_active_timing_report);
  status.add_last_exit_signal(last_exit_signal_);
  status.add_restarts(restarts_);
  if (!message_.empty()) status.add_message(message);
  if (state_ == State::WAITING) {
    status.add_next_start_time(next_start_time_.time_since_epoch().count());
  }
  return status.Finish();
}

}  // namespace aos::starter
