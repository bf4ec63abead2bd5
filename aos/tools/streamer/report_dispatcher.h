#ifndef AOS_TOOLS_STREAMER_REPORT_DISPATCHER_H_
#define AOS_TOOLS_STREAMER_REPORT_DISPATCHER_H_

// The one path every timing report takes in aos_timing_report_streamer,
// whether it came live or from a log: decoded and validated once (malformed
// ones are counted and warned about once per kind), learned into the path
// directory, checked against the configuration, filtered by --application,
// --pid and --node, added to the accumulator, and handed to every sink.
// After --count matches it stops the source. Every report and starter status
// also tells which configured applications are silent (LivenessWatch); the
// sinks hear it once a second.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "aos/events/path_directory.h"
#include "aos/events/timing_report_accumulator.h"
#include "aos/tools/streamer/application_liveness.h"
#include "aos/tools/streamer/report_sink.h"
#include "aos/tools/streamer/report_source.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

class ReportDispatcher : public ReportReceiver {
 public:
  // Nothing is owned; all must outlive the dispatcher. `directory` is the
  // source's configuration's; the sinks get the reports in their order.
  ReportDispatcher(const StreamerOptions* options, ReportSource* source,
                   PathDirectory* directory, std::vector<ReportSink*> sinks);

  void OnReport(const Context& context, const void* data) override;
  void OnBridgeStatistics(const std::string& node, const Context& context,
                          const void* data) override;
  void OnStarterStatus(const std::string& node, const Context& context,
                       const void* data) override;
  const MatchTally& tally() const override { return tally_; }

  const TimingReportAccumulator& accumulator() const { return accumulator_; }
  // Reports and bridge statistics that did not validate.
  int64_t malformed() const { return malformed_; }

 private:
  // Hands the applications' liveness to the sinks when it is due.
  void ShowLiveness(monotonic_clock::time_point now);
  // Says once that `report` names channels the configuration lacks.
  void CheckFitsConfig(const timing::ReportContents& report);
  bool Matches(const timing::ReportHeader& header) const;

  const StreamerOptions* options_;
  ReportSource* source_;
  PathDirectory* directory_;
  std::vector<ReportSink*> sinks_;
  int config_channels_;
  TimingReportAccumulator accumulator_;
  LivenessWatch liveness_;
  MatchTally tally_;
  int64_t malformed_ = 0;
  std::set<std::string> warned_;
  bool said_config_mismatch_ = false;
  // --count reached: later reports are not shown.
  bool stopped_ = false;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_REPORT_DISPATCHER_H_
