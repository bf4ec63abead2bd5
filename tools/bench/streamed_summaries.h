#ifndef TOOLS_BENCH_STREAMED_SUMMARIES_H_
#define TOOLS_BENCH_STREAMED_SUMMARIES_H_

// What a bench reads from `aos_timing_report_streamer --format=json
// --stream=false` (docs/streamer.md, "JSON"): at its exit, one line per
// application with that application's accumulated report and, per
// callback, the percentiles of its wakeup latency and of the age of the
// data it got along each path (path latency, docs/timing_reports.md).
// Benches use it to say where a path's time goes from the processes' own
// reports:
//
//   absl::StatusOr<StreamedSummaries> pi2 =
//       StreamedSummaries::Parse(streamer->Stdout(), "pi2's streamer");
//   const CallbackFigures pong =
//       pi2->Watcher("pong", "/test", "aos.examples.Ping");
//   // pong.path_age_p50_us: ping's message's age when pong's watcher ran.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace aos::bench {

// One callback's figures over everything the streamer accumulated, in us;
// NaN where the report had none (no samples, no path, no such callback).
struct CallbackFigures {
  double wakeup_p50_us = NAN;
  // The age of the data at the callback's start along the path with the
  // most hops (on a tie, the first listed): from the origin (the timer or
  // phased loop that started the path) to this callback.
  double path_age_p50_us = NAN;
  // How far that age may be off: the largest uncertainty of translating the
  // origin's time from another node's clock (the message bridge's clock
  // offset estimate); 0 for an origin on this node; NaN where the output
  // does not say.
  double path_uncertainty_us = NAN;
  // That path's hops; 0 without a path.
  int hops = 0;
};

// The accumulated reports of one streamer's output.
class StreamedSummaries {
 public:
  // Parses `text`, the streamer's stdout (`source` names it in errors).
  // Lines that are not an accumulated report (the per-window reports of
  // --stream, the notices of silent applications, blank lines) are
  // skipped. An error names the line that is not JSON or whose
  // percentiles are malformed.
  static absl::StatusOr<StreamedSummaries> Parse(std::string_view text,
                                                 std::string source);

  // The watcher of `application` on channel `name` of `type`. When several
  // processes of that name reported, the first one's.
  CallbackFigures Watcher(std::string_view application, std::string_view name,
                          std::string_view type) const;

  // How many accumulated reports were read.
  int reports() const { return reports_; }

 private:
  struct WatcherEntry {
    std::string application;
    std::string name;
    std::string type;
    CallbackFigures figures;
  };
  std::vector<WatcherEntry> watchers_;
  int reports_ = 0;
};

}  // namespace aos::bench

#endif  // TOOLS_BENCH_STREAMED_SUMMARIES_H_
