// aos_timing_report_streamer: prints the timing reports on /aos as they
// arrive, and on Ctrl-C, SIGTERM or after --duration sums them up per
// application. docs/streamer.md explains every column; the work is in
// aos/tools/streamer/ (streamer.h shows how its parts fit).
#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/tools/streamer/streamer.h"
#include "aos/tools/streamer/streamer_options.h"
#include "aos/util/flag_checks.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(application, "",
              "Only reports of these applications (exact names, comma "
              "separated); default: all.");
DEFINE_int32(pid, 0, "Only reports of this process id (0: any).");
DEFINE_string(node, "",
              "In a multi-node config: only this node's reports (its /aos, "
              "e.g. /pi2/aos, read here where the bridge forwards it); "
              "default: every node's.");
DEFINE_bool(stream, true, "Print each report as it arrives.");
DEFINE_bool(accumulate, true,
            "On exit, print every application's reports summed up.");
DEFINE_int32(count, 0,
             "Stop after this many reports matched the filters (0: no "
             "limit).");
DEFINE_double(duration, 0,
              "Stop after this many seconds (0: at Ctrl-C or SIGTERM).");
DEFINE_string(format, "table",
              "table (one row per callback, in --units), aos (AOS's "
              "streamer layout, seconds, plus percentiles), json (one "
              "aos.timing.StreamedReport per line, strict JSON), or csv (a "
              "header, then one row per report entry and path, us; the last "
              "column, window, is report, or summary for the summaries' "
              "rows).");
DEFINE_string(log, "",
              "Read the timing reports from this MCAP log (aos_logger wrote "
              "it) instead of live shared memory, then exit; the log's "
              "configuration is used.");
DEFINE_string(units, "us", "Time unit of --format=table: ns, us or ms.");
DEFINE_string(histogram_file, "",
              "On exit, write the accumulated histograms here as a gnuplot "
              "table (like Xenomai's latency -g).");
DEFINE_string(plot, "",
              "On exit, draw the accumulated wakeup-latency histograms of "
              "the selected timers and watchers into this PNG (OSADL style, "
              "with gnuplot); path ages, if any, into FILE_paths.png.");
DEFINE_bool(top, false,
            "Instead of streaming reports, redraw one screen per report, like "
            "top: every callback's latest window, slowest p99 first, with a "
            "mark where --max_wakeup_latency_us fails, then every path, "
            "oldest first, marked where --max_path_age_us fails, fitted to "
            "the terminal (ANSI only on a terminal; works over ssh). Ctrl-C "
            "ends it with the summary.");
DEFINE_int32(top_rows, 40,
             "The most callback rows --top shows, and the most path rows.");
DEFINE_int32(metrics_port, 0,
             "Serve Prometheus metrics of the accumulated reports on "
             "http://--metrics_address:PORT/metrics (0: off).");
DEFINE_string(metrics_address, "127.0.0.1",
              "IPv4 address --metrics_port listens on: this machine only by "
              "default; 0.0.0.0 (every interface) or one interface's address "
              "lets a Prometheus elsewhere scrape it, and anyone who reaches "
              "that address (no authentication).");
DEFINE_double(max_wakeup_latency_us, 0,
              "If any accumulated max wakeup latency exceeds this, say which "
              "and exit 1 (0: no limit).");
DEFINE_string(snapshot_dir, "",
              "Live, with --max_wakeup_latency_us: each report over it makes "
              "a flight recorder snapshot of its window (its node's rings "
              "under --shm_base) in this directory (docs/tracing.md).");
DEFINE_double(snapshot_interval_s, 10,
              "With --snapshot_dir: at most one snapshot per this many seconds "
              "of report time; the reports between are counted.");
DEFINE_double(max_path_age_us, 0,
              "If any path's max age (callback start - origin time: how old "
              "the data a watcher or fetcher got was) exceeds this in any "
              "window, say which and exit 1 (0: no limit).");
DEFINE_double(no_match_warning_s, 3,
              "Warn when no report matched the filters for this long.");
DEFINE_double(silent_after_s, 3,
              "A configured application with no timing report for this long "
              "is listed as silent, with what its starter says (table, JSON, "
              "--top, and aos_application_up in /metrics).");

namespace aos {
namespace {

// The flags as typed.
streamer::StreamerFlags Flags() {
  return {
      .application = FLAGS_application,
      .pid = FLAGS_pid,
      .node = FLAGS_node,
      .stream = FLAGS_stream,
      .accumulate = FLAGS_accumulate,
      .count = FLAGS_count,
      .duration = FLAGS_duration,
      .format = FLAGS_format,
      .log = FLAGS_log,
      .units = FLAGS_units,
      .histogram_file = FLAGS_histogram_file,
      .plot = FLAGS_plot,
      .top = FLAGS_top,
      .top_rows = FLAGS_top_rows,
      .metrics_port = FLAGS_metrics_port,
      .metrics_address = FLAGS_metrics_address,
      .max_wakeup_latency_us = FLAGS_max_wakeup_latency_us,
      .max_path_age_us = FLAGS_max_path_age_us,
      .snapshot_dir = FLAGS_snapshot_dir,
      .snapshot_interval_s = FLAGS_snapshot_interval_s,
      .no_match_warning_s = FLAGS_no_match_warning_s,
      .silent_after_s = FLAGS_silent_after_s,
      .config = FLAGS_config,
      .shm_base = aos::ShmBase(),
  };
}

int Main(int argc, char** argv) {
  RefuseArguments(argc, argv);
  absl::StatusOr<streamer::StreamerOptions> options =
      streamer::ParseStreamerOptions(Flags());
  ExitOnFlagError(options.status());
  return streamer::RunStreamer(*options);
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_timing_report_streamer [--application=ping] [--duration=S]\n"
      "Prints the timing reports on /aos as they arrive and, on Ctrl-C, "
      "SIGTERM\n"
      "or after --duration, every application's reports summed up.\n"
      "--config defaults to the framework's aos/aos.json (/aos only).\n"
      "See docs/streamer.md.");
  return aos::Main(argc, argv);
}
