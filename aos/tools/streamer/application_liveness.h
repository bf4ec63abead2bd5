#ifndef AOS_TOOLS_STREAMER_APPLICATION_LIVENESS_H_
#define AOS_TOOLS_STREAMER_APPLICATION_LIVENESS_H_

// Which configured applications are silent (docs/streamer.md, "Silent
// applications"): every application the configuration gives the shown
// nodes, when its last timing report came, and what its node's starter
// (aos.starter.Status) says of it. An application is up when a report of
// it arrived within --silent_after_s, and silent otherwise (also one that
// never reported, once that long has passed since watching began).
//
//   LivenessWatch watch(&config, &options);
//   watch.OnReport("pi2", "pong", event_time);       // every report
//   watch.OnStarterStatus("pi2", status, event_time);
//   if (watch.Advance(now)) sink->OnLiveness(watch.Applications());
//
// Time is the monotonic event time of the messages that arrive (live, or
// from a log), so a log is judged by its own clock.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aos/configuration.h"
#include "aos/starter/starter_generated.h"
#include "aos/time/time.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

// What a node's starter last said of an application.
struct StarterSays {
  std::string state;
  uint32_t restarts = 0;
  std::string message;
};

struct ApplicationLiveness {
  // "" in a single-node configuration.
  std::string node;
  std::string name;
  bool up = false;
  // Since its last report, or since watching began if it never reported.
  std::chrono::nanoseconds silent_for{0};
  bool ever_reported = false;
  std::optional<StarterSays> starter;

  // One line: "pong on pi2: no report for 3 s; starter: WAITING, 2
  // restarts (exited with status 3 ...)".
  std::string Describe() const;
};

// The silent ones of `applications`, one Describe() line each, prefixed
// "silent: " (empty when all are up).
std::string SilentLines(const std::vector<ApplicationLiveness>& applications);

// `applications` as one strict JSON object: {"applications": [{"node",
// "application", "up", "seconds_since_report" (null if it never reported),
// "starter": {"state", "restarts", "message"} or null}]}.
std::string LivenessJson(const std::vector<ApplicationLiveness>& applications);

class LivenessWatch {
 public:
  // The applications of `config` on the nodes `options` shows (--node) and,
  // with --application, those named. Both must outlive the watch.
  LivenessWatch(const Configuration* config, const StreamerOptions* options);

  // A timing report of `name` on `node` arrived at `at`.
  void OnReport(const std::string& node, const std::string& name,
                monotonic_clock::time_point at);
  // `node`'s starter sent `status` at `at` (verified).
  void OnStarterStatus(const std::string& node, const starter::Status& status,
                       monotonic_clock::time_point at);

  // Time has reached `now`. True once a second (of `now`), when the
  // applications' liveness should be shown again.
  bool Advance(monotonic_clock::time_point now);

  // Every watched application, as of the last Advance, in config order.
  std::vector<ApplicationLiveness> Applications() const;

  bool empty() const { return watched_.empty(); }

 private:
  // Time has reached `now`; the first time seen starts the watch.
  void Observe(monotonic_clock::time_point now);

  struct Watched {
    std::string node;
    std::string name;
    std::optional<monotonic_clock::time_point> last_report;
    std::optional<StarterSays> starter;
  };

  const StreamerOptions* options_;
  std::vector<Watched> watched_;
  // (node, name) -> index in watched_.
  std::map<std::pair<std::string, std::string>, size_t> index_;
  std::optional<monotonic_clock::time_point> began_;
  monotonic_clock::time_point now_ = monotonic_clock::min_time;
  monotonic_clock::time_point next_show_ = monotonic_clock::min_time;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_APPLICATION_LIVENESS_H_
