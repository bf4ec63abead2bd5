#ifndef AOS_EVENTS_STOP_SIGNALS_H_
#define AOS_EVENTS_STOP_SIGNALS_H_

// SIGINT, SIGHUP and SIGTERM end every running ShmEventLoop of the process,
// as in AOS: a program with several loops (threads) stops them all, and a
// second Ctrl-C while a handler is stuck kills the process.
//
//   std::unique_ptr<StopSignals> stop = StopSignals::WhileRunning();
//   epoll.OnReadable(stop->fd(), [&]() {
//     if (const int signal = stop->Take(); signal != 0) ... end the loop ...
//   });
//
// While at least one StopSignals lives, the three signals are handled by a
// process-wide handler installed with SA_RESETHAND: the first signal makes
// every live StopSignals' fd readable (and restores the default action, so a
// second one acts as if nothing handled it: Ctrl-C twice kills). When the
// last StopSignals goes, the handlers the process had before are restored.
// Nothing is blocked: before a loop runs and after it returns, the signals
// do what they did.
//
// The handler only loads atomics and write(2)s to eventfds that are never
// closed (a slot keeps its eventfd for the life of the process), so it is
// async-signal-safe and never writes to an fd a thread just closed. At most
// kMaxRunning loops run at once in one process.

#include <memory>

namespace aos::internal {

class StopSignals {
 public:
  static constexpr int kMaxRunning = 256;

  // For a loop about to run. Installs the handlers if no loop was running.
  // Aborts with a message if kMaxRunning loops already run. Allocates and
  // takes a mutex: not for realtime paths.
  static std::unique_ptr<StopSignals> WhileRunning();

  // Restores the process's own handlers if this was the last one.
  ~StopSignals();

  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Readable once a stop signal arrived while this lived.
  int fd() const;

  // The signal that arrived (SIGINT, SIGHUP or SIGTERM), 0 if none; makes
  // fd() unreadable again. Never allocates.
  int Take();

 private:
  explicit StopSignals(int slot) : slot_(slot) {}
  const int slot_;
};

}  // namespace aos::internal

#endif  // AOS_EVENTS_STOP_SIGNALS_H_
