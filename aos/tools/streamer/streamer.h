#ifndef AOS_TOOLS_STREAMER_STREAMER_H_
#define AOS_TOOLS_STREAMER_STREAMER_H_

// aos_timing_report_streamer, wired: one report source (live shared memory,
// or --log), one dispatcher that decodes, filters and accumulates every
// report, and the output sinks the options ask for; at the end the
// summaries, the output files and the gates (docs/streamer.md).
//
//   ├── streamer_options      the flags, checked in one place
//   ├── report_source         live_report_source | log_report_source
//   ├── report_dispatcher     decode, filter, accumulate: the one path
//   ├── report_sink           table_sink | aos_sink | json_sink | csv_sink
//   │                         (text_report_sink), top_sink, metrics_sink,
//   │                         histogram_file_sink, plot_sink
//   └── gates                 --max_wakeup_latency_us, --max_path_age_us

#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

// Runs the streamer as `options` say, until the log ends or (live) Ctrl-C,
// SIGTERM, --duration or --count; returns the exit status: 0, 1 if a user
// error (said in one line on stderr: a config or log that cannot be read, a
// --node that is no node, a file that cannot be written) or a gate failed,
// 2 if a gate saw nothing to check. Live, --config is read (ReadConfigFlag).
int RunStreamer(const StreamerOptions& options);

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_STREAMER_H_
