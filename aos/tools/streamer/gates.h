#ifndef AOS_TOOLS_STREAMER_GATES_H_
#define AOS_TOOLS_STREAMER_GATES_H_

// The streamer's CI gates: --max_wakeup_latency_us on the accumulated
// wakeup latencies and --max_path_age_us on every path's age. A gate that
// fails says which callback or path on stderr ("FAILED: ..."); a gate that
// saw nothing to check says so, as that must not pass silently.

#include <vector>

#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

// The exit status the gates give `summaries`: 1 if one failed, else 2 if
// one saw nothing to check, else 0 (also when no gate is set).
int GateExitStatus(const StreamerOptions& options,
                   const std::vector<timing::ReportContents>& summaries,
                   const Configuration& configuration,
                   const PathDirectory* directory);

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_GATES_H_
