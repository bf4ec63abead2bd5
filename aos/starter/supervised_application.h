#ifndef AOS_STARTER_SUPERVISED_APPLICATION_H_
#define AOS_STARTER_SUPERVISED_APPLICATION_H_

// One application under a starter: its process's life as AOS's starter
// states say it (WAITING, STARTING, RUNNING, STOPPING, STOPPED), driven by
// commands, by its exits and by the clock. It owns no timer and reaps
// nothing itself: the starter (starter.h) tells it the time (Tick, at
// NextDeadline()) and what waitpid said (OnExit), and watches
// child_exit_fd() for the exit.
//
//   SupervisedApplication pong(spec, &options);
//   pong.Start(now);                     // RUNNING, or why not in status
//   ... child_exit_fd() readable: waitpid(pong.pid()) → pong.OnExit(now, s)
//   pong.Tick(now);                      // restarts after the backoff
//
// A started application holds a lock (LOCK_EX on a file in
// options.lock_dir, inherited across exec) for as long as its process
// lives: a starter that finds the lock taken does not start a second copy
// (it waits, saying whose pid holds it), as after a starter restart while
// an old child still exits.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "aos/starter/application_spec.h"
#include "aos/starter/process_usage.h"
#include "aos/starter/restart_backoff.h"
#include "aos/starter/starter_generated.h"
#include "aos/time/time.h"
#include "aos/util/scoped_fd.h"

namespace aos::starter {

struct SupervisorOptions {
  RestartBackoffOptions backoff;
  // Where the applications' lock files are (made if missing).
  std::string lock_dir;
};

class SupervisedApplication {
 public:
  // `options` must outlive it. Nothing runs until Start.
  SupervisedApplication(ApplicationSpec spec, const SupervisorOptions* options);
  // Leaves a running process running: the starter stops its applications
  // (StopNow) before it destroys them.
  ~SupervisedApplication() = default;
  SupervisedApplication(const SupervisedApplication&) = delete;
  SupervisedApplication& operator=(const SupervisedApplication&) = delete;

  // The START command, or autostart: starts it unless it runs; forgets its
  // quick exits.
  void Start(monotonic_clock::time_point now);
  // The STOP command (or a removal from the config, with that reason):
  // SIGTERM to its process group, SIGKILL after its stop_time; then
  // STOPPED, and not restarted until a START.
  void Stop(monotonic_clock::time_point now, LastStopReason reason);
  // The RESTART command: Stop, then Start once it exited.
  void Restart(monotonic_clock::time_point now);

  // Its process exited with `wait_status` (waitpid's): restarts it after
  // the backoff if it stopped by itself and autorestarts.
  void OnExit(monotonic_clock::time_point now, int wait_status);
  // Does what is due at `now`: a start after its wait, SIGKILL after a stop
  // time.
  void Tick(monotonic_clock::time_point now);
  // When Tick next has something to do, if ever.
  std::optional<monotonic_clock::time_point> NextDeadline() const;

  // Samples its process's CPU and memory (the share is over the time since
  // the last sample).
  void SampleUsage();

  // Stops it now, blocking: SIGTERM, up to its stop_time, then SIGKILL,
  // and reaps it. For a starter that is stopping.
  void StopNow();

  // Replaces its spec (from a changed config): restarts it if it runs and
  // the change reaches the process.
  void UpdateSpec(ApplicationSpec spec, monotonic_clock::time_point now);

  // Its entry of aos.starter.Status.
  flatbuffers::Offset<ApplicationStatus> PackStatus(
      flatbuffers::FlatBufferBuilder* fbb, bool has_active_timing_report) const;

  const ApplicationSpec& spec() const { return spec_; }
  State state() const { return state_; }
  // 0 when no process runs.
  pid_t pid() const { return pid_; }
  // Readable once the running process exited (a pidfd); -1 when none runs.
  int child_exit_fd() const { return pidfd_.get(); }
  // Orders starts across applications: the starter stops in reverse.
  uint64_t start_sequence() const { return start_sequence_; }
  uint32_t restarts() const { return restarts_; }
  // When its current (or last) run started; min_time before the first.
  monotonic_clock::time_point last_start_time() const {
    return last_start_time_;
  }
  const std::string& message() const { return message_; }
  // How its last run ended (ExitCodeOf: the exit code, or -N for signal
  // N), or nothing if it never ended.
  std::optional<int> last_exit() const { return last_exit_; }

 private:
  // Forks and execs it now (holding its lock), or says why not.
  void Launch(monotonic_clock::time_point now);
  // After it stopped by itself: WAITING until the backoff passed, or
  // STOPPED when it does not autorestart.
  void ScheduleRestart(monotonic_clock::time_point now,
                       std::chrono::nanoseconds run_time,
                       const std::string& what_happened);

  ApplicationSpec spec_;
  const SupervisorOptions* options_;
  RestartBackoff backoff_;

  State state_ = State::STOPPED;
  LastStopReason last_stop_reason_ = LastStopReason::STOP_REQUESTED;
  pid_t pid_ = 0;
  ScopedFd pidfd_;
  uint64_t id_ = 0;
  uint64_t start_sequence_ = 0;
  uint32_t restarts_ = 0;
  // Whether the next launch from WAITING is a restart (counted).
  bool waiting_is_restart_ = false;
  // Set by Restart: start again once the stop is done.
  bool start_after_stop_ = false;
  LastStopReason pending_stop_reason_ = LastStopReason::STOP_REQUESTED;
  monotonic_clock::time_point last_start_time_ = monotonic_clock::min_time;
  monotonic_clock::time_point next_start_time_ = monotonic_clock::min_time;
  monotonic_clock::time_point kill_time_ = monotonic_clock::max_time;
  uint8_t last_exit_code_ = 0;
  int last_exit_signal_ = 0;
  std::optional<int> last_exit_;
  std::string message_;
  std::optional<ProcessUsage> usage_;
  float cpu_share_ = 0;
};

}  // namespace aos::starter

#endif  // AOS_STARTER_SUPERVISED_APPLICATION_H_
