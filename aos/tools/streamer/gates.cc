#include "aos/tools/streamer/gates.h"

#include <iostream>

#include "aos/events/timing_report_format.h"

namespace aos::streamer {

int GateExitStatus(const StreamerOptions& options,
                   const std::vector<timing::ReportContents>& summaries,
                   const Configuration& configuration,
                   const PathDirectory* directory) {
  const StreamerFlags& flags = options.flags;
  int status = 0;
  if (flags.max_wakeup_latency_us > 0) {
    const WorstWakeup worst = FindWorstWakeup(summaries, configuration);
    if (summaries.empty()) {
      std::cerr << "aos_timing_report_streamer: --max_wakeup_latency_us: no "
                   "timing report matched the filters, so nothing was "
                   "checked (exit 2)\n";
      status = 2;
    } else if (worst.max_us > flags.max_wakeup_latency_us) {
      std::cerr << "FAILED: " << worst.what << " woke up " << worst.max_us
                << " us late, more than --max_wakeup_latency_us="
                << flags.max_wakeup_latency_us << "\n";
      status = 1;
    }
  }
  if (flags.max_path_age_us > 0) {
    const WorstPathAge worst = FindWorstPathAge(summaries, directory);
    if (worst.paths == 0) {
      std::cerr << "aos_timing_report_streamer: --max_path_age_us: "
                << (summaries.empty()
                        ? "no timing report matched the filters"
                        : "no watcher or fetcher of the matching reports "
                          "reported a path age")
                << ", so nothing was checked (exit 2)\n";
      if (status == 0) status = 2;
    } else if (worst.max_us > flags.max_path_age_us) {
      std::cerr << "FAILED: " << worst.what << ": got data " << worst.max_us
                << " us old, more than --max_path_age_us="
                << flags.max_path_age_us << "\n";
      status = 1;
    }
  }
  return status;
}

}  // namespace aos::streamer
