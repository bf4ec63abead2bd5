#ifndef AOS_TOOLS_STREAMER_SNAPSHOT_SINK_H_
#define AOS_TOOLS_STREAMER_SNAPSHOT_SINK_H_

// --snapshot_dir with --max_wakeup_latency_us: a timing report whose worst
// wakeup latency is over the limit makes a flight recorder snapshot
// (docs/tracing.md) of that report's window, of every ring under the
// streamer's --shm_base on the report's node, around the one call that was
// latest, into --snapshot_dir: at most one per --snapshot_interval_s of
// report time (the others counted), so that a loop always a little late
// does not fill the disk. Reports of loops whose rings are not here
// (another node's, forwarded) are counted, not snapshotted.

#include <cstdint>
#include <string>

#include "aos/configuration.h"
#include "aos/tools/streamer/report_sink.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

class SnapshotSink : public ReportSink {
 public:
  // `options` and `configuration` must outlive the sink.
  SnapshotSink(const StreamerOptions* options,
               const Configuration* configuration)
      : options_(options), configuration_(configuration) {}

  void OnReport(const timing::ReportContents& report,
                const TimingReportAccumulator& accumulator) override;
  // Says how many snapshots it wrote, and how many reports over the limit
  // had no ring here.
  absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) override;

 private:
  const StreamerOptions* const options_;
  const Configuration* const configuration_;
  int written_ = 0;
  int not_here_ = 0;
  int suppressed_ = 0;
  // The end of the window of the last report snapshotted.
  int64_t last_written_ns_ = 0;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_SNAPSHOT_SINK_H_
