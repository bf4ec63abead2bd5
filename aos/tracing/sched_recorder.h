#ifndef AOS_TRACING_SCHED_RECORDER_H_
#define AOS_TRACING_SCHED_RECORDER_H_

// Recording the kernel scheduler's switches and wakeups for the flight
// recorder (docs/tracing.md, "What held the CPU"): a tracefs instance of
// our own, `<tracefs>/instances/aos_trace.<pid>`, with the `mono` trace
// clock (the event loops' CLOCK_MONOTONIC), sched:sched_switch and
// sched:sched_wakeup on, in overwrite mode: the kernel keeps the last
// `buffer_kb` per CPU, all the time, at no cost to us until it is read.
//
//   absl::StatusOr<std::unique_ptr<SchedRecorder>> sched =
//       SchedRecorder::Start(FindTracefs(), 2048);
//   if (!sched.ok()) ExitForUserError(sched.status().message());
//   absl::StatusOr<std::string> text = (*sched)->ReadText();
//
// Needs root (or CAP_SYS_ADMIN) and tracefs. Where tracefs is not mounted
// on its directory (`ip netns exec` remounts /sys without it), Start()
// mounts it there, as trace-cmd does. Other tracing on the machine (another
// instance, the top-level buffer) is left alone. The
// instance is removed by the destructor and at exit(); one left by a
// recorder that was killed is removed by the next Start().

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aos::tracing {

// Where tracefs is mounted: /sys/kernel/tracing, or the older
// /sys/kernel/debug/tracing; /sys/kernel/tracing if neither has instances.
std::string FindTracefs();

class SchedRecorder {
 public:
  // Makes and starts the instance under `tracefs`. An error is one line
  // naming the file that could not be made or written and why (not root,
  // no tracefs, no such event).
  static absl::StatusOr<std::unique_ptr<SchedRecorder>> Start(
      std::string_view tracefs, int buffer_kb);

  SchedRecorder(const SchedRecorder&) = delete;
  SchedRecorder& operator=(const SchedRecorder&) = delete;
  // Stops tracing and removes the instance.
  ~SchedRecorder();

  // The instance's whole `trace` text now, for sched_text.h. Recording goes
  // on while it is read.
  absl::StatusOr<std::string> ReadText() const;

  // The instance's directory.
  const std::string& directory() const { return directory_; }
  // CLOCK_MONOTONIC when recording started: nothing before it is recorded.
  int64_t started_ns() const { return started_ns_; }

 private:
  SchedRecorder(std::string directory, int64_t started_ns)
      : directory_(std::move(directory)), started_ns_(started_ns) {}

  std::string directory_;
  int64_t started_ns_;
};

}  // namespace aos::tracing

#endif  // AOS_TRACING_SCHED_RECORDER_H_
