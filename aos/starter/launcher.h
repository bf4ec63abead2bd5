#ifndef AOS_STARTER_LAUNCHER_H_
#define AOS_STARTER_LAUNCHER_H_

// Starts a node's applications, waits until each has said it runs (its
// first timing report on /aos), and stops them in reverse order: the one
// place programs of ours are launched from (tools, end-to-end tests,
// benches), and what the starter supervises with.
//
//   ShmEventLoop reports(&config.message(), "launcher");  // the node's shm
//   Launcher launcher(&reports, "/tmp/out");
//   CHECK_OK(launcher.Start({.name = "pong", .binary = pong, .args = {...}}));
//   CHECK_OK(launcher.Start({.name = "ping", .binary = ping, .args = {...}}));
//   absl::Status up = launcher.WaitUntilReporting(std::chrono::seconds(30));
//   if (!up.ok()) { ...; }  // names the application that died or is silent
//   ...
//   for (const Launcher::Stopped& stopped : launcher.StopAll(seconds(5))) {}
//
// An application is ready when a timing report whose name is its `name`
// arrives on the loop's /aos timing report channel after the Launcher was
// made: no sleeps, and a crash while starting is told from a slow start.
// Children run in process groups of their own (a Ctrl-C at the terminal
// reaches only whoever the caller forwards it to), get SIGKILL if the
// launching thread dies (PR_SET_PDEATHSIG), and may run in a named network
// namespace (/run/netns/NAME, as `ip netns add` makes; root only).

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "aos/events/event_loop.h"
#include "aos/events/event_loop_generated.h"

namespace aos::starter {

// One application to start.
struct LaunchSpec {
  // The name of its event loop: its timing reports carry it, and every
  // message about it says it.
  std::string name;
  // The program, and its arguments (without argv[0]).
  std::string binary;
  std::vector<std::string> args;
  // Empty: this network namespace; otherwise the one `ip netns` calls so.
  std::string network_namespace;
  // False for a program that sends no timing reports (a recorder, a
  // bridge with reports off): it is ready once started.
  bool reports = true;
};

class Launcher {
 public:
  // What became of an application StopAll stopped.
  struct Stopped {
    std::string name;
    // The exit code, or -N if signal N ended it (aos/util/exit_code.h
    // says it in words: DescribeExit).
    int status = 0;
    // Whether it ignored SIGTERM for the whole stop time and was killed.
    bool killed = false;
  };

  // Watches `reports_loop`'s /aos timing report channel (its node's shared
  // memory) from now on; it need not run, and must outlive the Launcher.
  // Each application's stdout and stderr go to NAME.out and NAME.err in
  // `output_dir`, or both to our stderr when it is empty (our stdout stays
  // the caller's: a table or JSON lines a user may pipe).
  Launcher(EventLoop* reports_loop, std::string output_dir);
  // Stops whatever still runs, as StopAll with a 5 s stop time.
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Starts `spec` now. An error (naming the application and the cause) if
  // the program cannot be started or the namespace entered; nothing runs
  // then.
  absl::Status Start(LaunchSpec spec);

  // Waits until every application started with `reports` has sent a timing
  // report, at most `deadline`. An error naming the first that exited
  // meanwhile, or had exited already (one without `reports` too), with its
  // status and the last lines it wrote when they went to a file; or naming
  // every one still silent at the deadline.
  absl::Status WaitUntilReporting(std::chrono::nanoseconds deadline);

  // Whether the application started as `name` still runs (false for one
  // never started).
  bool Running(std::string_view name);

  // The pid of the application started as `name`, or -1.
  pid_t Pid(std::string_view name) const;

  // Stops every application in the reverse order of their starts: SIGTERM
  // to its process group, up to `stop_time` for it to exit, then SIGKILL.
  // Returns each one's fate, in the order stopped.
  std::vector<Stopped> StopAll(std::chrono::nanoseconds stop_time);

  // What the application started as `name` wrote to stderr (empty when it
  // went to ours).
  std::string Stderr(std::string_view name) const;

 private:
  struct Child;

  // The application started as `name`, or null.
  Child* Find(std::string_view name) const;
  // Reaps `child` if it exited; true if it did (now or before).
  bool Reap(Child* child);

  Fetcher<timing::Report> reports_;
  std::string output_dir_;
  std::vector<std::unique_ptr<Child>> children_;
};

}  // namespace aos::starter

#endif  // AOS_STARTER_LAUNCHER_H_
