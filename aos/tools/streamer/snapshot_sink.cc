#include "aos/tools/streamer/snapshot_sink.h"

#include <iostream>

#include "aos/events/timing_report_format.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/snapshot_files.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {

void SnapshotSink::OnReport(const timing::ReportContents& report,
                            const TimingReportAccumulator& accumulator) {
  (void)accumulator;
  const double limit = options_->flags.max_wakeup_latency_us;
  const WorstWakeup worst = FindWorstWakeup({report}, *configuration_);
  if (worst.max_us <= limit) return;
  const int64_t interval_ns =
      static_cast<int64_t>(options_->flags.snapshot_interval_s * 1e9);
  if (written_ > 0 &&
      report.header.monotonic_end_ns - last_written_ns_ < interval_ns) {
    ++suppressed_;
    return;
  }
  tracing::NodeRings node = tracing::ReadNodeRings(options_->flags.shm_base);
  // The report's loop's ring, and the rings of its node.
  std::vector<tracing::RingCopy> rings;
  const tracing::RingCopy* reporter = nullptr;
  for (tracing::RingCopy& ring : node.rings) {
    if (ring.node != report.header.node) continue;
    rings.push_back(std::move(ring));
  }
  for (const tracing::RingCopy& ring : rings) {
    if (ring.pid == report.header.pid &&
        ring.application == report.header.name) {
      reporter = &ring;
    }
  }
  if (reporter == nullptr) {
    ++not_here_;
    return;
  }
  // The latest call of the window: the snapshot's trigger.
  const tracing::TraceWindow window{report.header.monotonic_start_ns,
                                    report.header.monotonic_end_ns};
  int64_t trigger_ns = window.end_ns;
  int64_t latest = -1;
  for (const tracing::Event& event : reporter->events) {
    if ((event.kind == tracing::EventKind::kTimerStart ||
         event.kind == tracing::EventKind::kWatcherStart) &&
        event.monotonic_ns >= window.begin_ns &&
        event.monotonic_ns <= window.end_ns &&
        event.monotonic_ns - event.aux_ns > latest) {
      latest = event.monotonic_ns - event.aux_ns;
      trigger_ns = event.monotonic_ns;
    }
  }
  tracing::SnapshotInfo info;
  info.node = report.header.node;
  info.reason =
      StrCat("aos_timing_report_streamer: ", worst.what, " woke up ",
             worst.max_us, " us late, over --max_wakeup_latency_us=", limit);
  info.trigger_ns = trigger_ns;
  info.skipped_rings = node.skipped;
  const tracing::Trace trace = tracing::BuildTrace(rings, window, info);
  absl::StatusOr<std::string> path = tracing::WriteSnapshot(
      options_->flags.snapshot_dir, trace, trigger_ns, report.header.node);
  if (!path.ok()) {
    std::cerr << "aos_timing_report_streamer: --snapshot_dir: "
              << path.status().message() << "\n";
    return;
  }
  ++written_;
  last_written_ns_ = report.header.monotonic_end_ns;
  std::cerr << "aos_timing_report_streamer: snapshot " << *path << ": "
            << info.reason << "\n";
}

absl::Status SnapshotSink::Finish(
    const std::vector<timing::ReportContents>& summaries) {
  (void)summaries;
  std::cerr << "aos_timing_report_streamer: " << written_
            << " snapshot(s) written to " << options_->flags.snapshot_dir;
  if (suppressed_ > 0) {
    std::cerr << "; " << suppressed_
              << " report(s) over the limit within --snapshot_interval_s="
              << options_->flags.snapshot_interval_s << " of one written";
  }
  if (not_here_ > 0) {
    std::cerr << "; " << not_here_
              << " report(s) over the limit had no ring under --shm_base "
                 "(another node's: run aos_trace record there)";
  }
  std::cerr << "\n";
  return absl::OkStatus();
}

}  // namespace aos::streamer
