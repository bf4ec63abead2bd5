#ifndef AOS_UTIL_SUBPROCESS_H_
#define AOS_UTIL_SUBPROCESS_H_

// A started program whose stdout and stderr go to files, for tests and
// benchmark drivers.
//
//   aos::Subprocess ping("bazel-bin/examples/ping", {"--sleep_ms=1"}, dir);
//   ...
//   int status = ping.Terminate();   // SIGTERM, then wait
//   std::string out = ping.Stdout();

#include <sys/types.h>

#include <string>
#include <vector>

namespace aos {

class Subprocess {
 public:
  // Starts `binary` with `args`; its output goes to files in `output_dir`.
  // Aborts with the binary named if it cannot be started.
  Subprocess(const std::string& binary, std::vector<std::string> args,
             const std::string& output_dir);
  // Kills (SIGKILL) and reaps the process if it still runs.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Waits for the exit status; -N if killed by signal N. Once waited for,
  // returns that status again.
  int Wait();
  // Sends SIGTERM and waits; once waited for, only returns the status (no
  // signal goes to a process that is gone, or to its pid's next owner).
  int Terminate();

  std::string Stdout() const;
  std::string Stderr() const;

  // User + system CPU time the running process has used so far, seconds.
  double CpuSeconds() const;

 private:
  pid_t pid_ = -1;
  // The exit status, once waited for.
  int exit_status_ = 0;
  std::string stdout_path_;
  std::string stderr_path_;
};

// User + system CPU time the running process `pid` has used so far,
// seconds, from /proc/PID/stat (0 if it is gone): for a process started
// otherwise (aos/starter/launcher.h's Pid). In clock ticks (10 ms here).
double CpuSecondsOf(pid_t pid);

}  // namespace aos

#endif  // AOS_UTIL_SUBPROCESS_H_
