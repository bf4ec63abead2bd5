#ifndef AOS_TOOLS_STREAMER_STREAMER_OPTIONS_H_
#define AOS_TOOLS_STREAMER_STREAMER_OPTIONS_H_

// What aos_timing_report_streamer was asked to do, checked in one place.
// The flags (aos_timing_report_streamer.cc) are copied into StreamerFlags as
// typed; ParseStreamerOptions checks them all and says what they mean. A
// test builds StreamerFlags directly.
//
//   absl::StatusOr<StreamerOptions> options = ParseStreamerOptions(flags);
//   if (!options.ok()) aos::ExitForUserError(options.status().message());

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "aos/events/timing_report_format.h"

namespace aos::streamer {

// The streamer's flags as given on the command line (docs/streamer.md);
// see their --help for each one's meaning.
struct StreamerFlags {
  std::string application = "";
  int pid = 0;
  std::string node = "";
  bool stream = true;
  bool accumulate = true;
  int count = 0;
  double duration = 0;
  std::string format = "table";
  std::string log = "";
  std::string units = "us";
  std::string histogram_file = "";
  std::string plot = "";
  bool top = false;
  int top_rows = 40;
  int metrics_port = 0;
  std::string metrics_address = "127.0.0.1";
  double max_wakeup_latency_us = 0;
  double max_path_age_us = 0;
  // Live, with max_wakeup_latency_us: where a report over it makes a
  // flight recorder snapshot (snapshot_sink.h); "" for none.
  std::string snapshot_dir = "";
  // At most one such snapshot per this many seconds of report time.
  double snapshot_interval_s = 10;
  double no_match_warning_s = 3;
  double silent_after_s = 3;
  // Shared flags the streamer names in its messages: --config (empty: the
  // built-in default) and --shm_base.
  std::string config = "";
  std::string shm_base = "";
};

// How reports and summaries are written (--format).
enum class OutputFormat { kTable, kAos, kJson, kCsv };

// The checked flags and what they mean.
struct StreamerOptions {
  StreamerFlags flags;
  OutputFormat format = OutputFormat::kTable;
  TimeUnit unit = TimeUnit::kMicroseconds;
  // --application split at commas; empty: every application.
  std::set<std::string, std::less<>> applications;

  // Whether reports come from --log rather than live shared memory.
  bool from_log() const { return !flags.log.empty(); }
  // Whether each report is printed in --format as it arrives (--stream,
  // unless --top draws screens instead).
  bool streams_text() const { return flags.stream && !flags.top; }
  // Whether the message bridges' statistics are shown: only the table
  // has room for them.
  bool shows_bridges() const {
    return format == OutputFormat::kTable && !flags.top;
  }
};

// Checks `flags` and returns what they mean; the first problem found is an
// InvalidArgument whose message is one line naming the flag (flag_checks.h):
// an unknown --format or --units, a negative count, time, limit or row
// count, a --metrics_port that is no TCP port, a live-only flag (--duration,
// --top, --metrics_port) with --log, or an output file (--histogram_file,
// --plot) that cannot be written. Output files are checked now, not after a
// long run, so a path that did not exist is created (empty).
absl::StatusOr<StreamerOptions> ParseStreamerOptions(
    const StreamerFlags& flags);

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_STREAMER_OPTIONS_H_
