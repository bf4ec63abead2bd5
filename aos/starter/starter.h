#ifndef AOS_STARTER_STARTER_H_
#define AOS_STARTER_STARTER_H_

// A node's starter (starterd's core, docs/starter.md): runs the
// applications the configuration gives the node, restarts those that stop
// by themselves (with a backoff), takes aos.starter.StarterRpc commands
// and publishes aos.starter.Status on /aos, as AOS's starterd.
//
//   ShmEventLoop loop(&config.message(), "starter", node);
//   Starter starter(&loop, &config.message(), node, options);
//   loop.Run();           // until SIGTERM
//   starter.StopAll();    // reverse start order, SIGTERM then SIGKILL
//
// Status goes out every status_period and soon after any change (at most
// every 20 ms). Commands arrive on every StarterRpc channel readable on the
// node: its own /aos (acted on when `nodes` is empty or names the node) and
// those forwarded from other nodes (acted on when `nodes` names it).
// With a config_path, the file is checked every status period: a changed
// file's applications replace the old (removed ones are stopped, new ones
// started, changed ones restarted); its channels are not (restart the
// starter for those). A config that does not read is named once and the
// running set is kept.

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/shm_event_loop.h"
#include "aos/starter/starter_generated.h"
#include "aos/starter/starter_rpc_generated.h"
#include "aos/starter/supervised_application.h"
#include "aos/util/scoped_fd.h"

namespace aos::starter {

struct StarterOptions {
  SupervisorOptions supervisor;
  // Where relative binaries are looked for (ApplicationsOf).
  std::string binary_dir;
  // The config file to watch for changes, or empty.
  std::string config_path;
  std::chrono::nanoseconds status_period = std::chrono::seconds(1);
};

class Starter {
 public:
  // Before `loop` runs; starts the autostart applications when it does.
  // `config` and `node` (null in a single-node config) must outlive it.
  Starter(ShmEventLoop* loop, const Configuration* config, const Node* node,
          StarterOptions options);
  // StopAll; forgets the loop's callbacks of ours (the loop may outlive
  // us, not run).
  ~Starter();
  Starter(const Starter&) = delete;
  Starter& operator=(const Starter&) = delete;

  // Stops every application in the reverse order of their starts, each
  // with SIGTERM, then SIGKILL after its stop_time; blocking. Once the loop
  // returned. Logs how each one ended.
  void StopAll();

  // How each application's last run ended, "NAME STATUS\n" (STATUS as
  // ExitCodeOf says it), for those whose run ended; in config order.
  std::vector<std::string> ExitLines() const;

  // The application called `name`, or null.
  SupervisedApplication* Find(std::string_view name);

 private:
  void HandleCommand(const StarterRpc& rpc);
  void ReapExited();
  void OnTick();
  void Reschedule();
  void SendStatus();
  void CheckConfig();
  void ApplySpecs(std::vector<ApplicationSpec> specs);
  // Adds the child's exit fd of `application` to the exit epoll, if it runs
  // and is not there yet.
  void WatchExits();

  ShmEventLoop* loop_;
  const Node* node_;
  std::string node_name_;
  StarterOptions options_;
  std::vector<std::unique_ptr<SupervisedApplication>> applications_;
  Sender<Status> status_sender_;
  TimerHandler* tick_ = nullptr;
  // An epoll over the running applications' pidfds: readable when one
  // exited; the loop watches it.
  ScopedFd exits_epoll_;
  std::map<int, SupervisedApplication*> watched_exit_fds_;
  // When each application's last timing report arrived.
  std::map<std::string, monotonic_clock::time_point, std::less<>> last_report_;
  monotonic_clock::time_point next_status_ = monotonic_clock::min_time;
  monotonic_clock::time_point last_status_ = monotonic_clock::min_time;
  bool status_dirty_ = true;
  // The config file's modification time and size when last read.
  int64_t config_mtime_ns_ = 0;
  int64_t config_size_ = -1;
  bool status_error_said_ = false;
  // Applications that left the config and are stopping.
  std::set<std::string, std::less<>> removed_;
};

}  // namespace aos::starter

#endif  // AOS_STARTER_STARTER_H_
