#ifndef AOS_STARTER_RESTART_BACKOFF_H_
#define AOS_STARTER_RESTART_BACKOFF_H_

// When an application that stopped by itself starts again: at once after
// a run that lasted, later and later after runs that end soon after they
// start (a crash loop), so that a program that exits at once is never a
// fork storm.
//
//   RestartBackoff backoff({});
//   nanoseconds wait = backoff.OnExit(started, exited);  // 0, 100 ms, ...

#include <chrono>

namespace aos::starter {

struct RestartBackoffOptions {
  // The wait after the first quick exit; it doubles with each quick exit
  // in a row, up to `max`.
  std::chrono::nanoseconds initial = std::chrono::milliseconds(100);
  std::chrono::nanoseconds max = std::chrono::seconds(10);
  // A run at least this long is not a quick exit: it resets the count.
  std::chrono::nanoseconds healthy_after = std::chrono::seconds(1);
};

class RestartBackoff {
 public:
  explicit RestartBackoff(RestartBackoffOptions options) : options_(options) {}

  // Records a run from `started` to `exited`; returns how long to wait
  // before the next start: 0 after a healthy run, else initial * 2^(n-1)
  // for the n-th quick exit in a row, at most `max`.
  std::chrono::nanoseconds OnExit(std::chrono::nanoseconds run_time);

  // Forgets the quick exits (a start or restart by command).
  void Reset() { quick_exits_in_a_row_ = 0; }

  // The quick exits since the last healthy run or Reset.
  int quick_exits_in_a_row() const { return quick_exits_in_a_row_; }

  const RestartBackoffOptions& options() const { return options_; }

 private:
  RestartBackoffOptions options_;
  int quick_exits_in_a_row_ = 0;
};

}  // namespace aos::starter

#endif  // AOS_STARTER_RESTART_BACKOFF_H_
