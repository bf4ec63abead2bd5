// aos_timing_report_streamer: prints the timing reports on /aos as they
// arrive, and on Ctrl-C, SIGTERM or after --duration sums them up per
// application. docs/streamer.md explains every column.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/str_split.h"
#include "aos/config_flag.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_memory_flag.h"
#include "aos/events/path_directory.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_report_accumulator.h"
#include "aos/events/timing_report_codec.h"
#include "aos/events/timing_report_format.h"
#include "aos/init.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/tools/bridge_statistics_format.h"
#include "aos/tools/latency_plot.h"
#include "aos/tools/metrics_exporter.h"
#include "aos/tools/node_channels.h"
#include "aos/tools/terminal.h"
#include "aos/tools/top_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

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
DEFINE_double(max_path_age_us, 0,
              "If any path's max age (callback start - origin time: how old "
              "the data a watcher or fetcher got was) exceeds this in any "
              "window, say which and exit 1 (0: no limit).");
DEFINE_double(no_match_warning_s, 3,
              "Warn when no report matched the filters for this long.");

namespace aos {
namespace {

constexpr std::string_view kProgram = "aos_timing_report_streamer";

// One line naming the culprit; the caller exits 1.
int Misuse(std::string_view what) {
  std::cerr << kProgram << ": " << what << "\n";
  return 1;
}

// `rows` (RFC 4180 CSV, each row ending in '\n') with `value` added as a
// last column: line breaks inside quoted fields are not row ends.
std::string AppendCsvColumn(std::string_view rows, std::string_view value) {
  std::string out;
  out.reserve(rows.size() + rows.size() / 8);
  bool quoted = false;
  for (char c : rows) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      out += ',';
      out += value;
    }
    out += c;
  }
  return out;
}

// The largest channel index `report` names, or -1.
int LargestChannelIndex(const timing::ReportContents& report) {
  int largest = -1;
  for (const auto& w : report.watchers) {
    largest = std::max(largest, w.channel_index);
  }
  for (const auto& f : report.fetchers) {
    largest = std::max(largest, f.channel_index);
  }
  for (const auto& sender : report.senders) {
    largest = std::max(largest, sender.channel_index);
  }
  return largest;
}

// Watches `reports` (and `bridges`, if given) on `loop` until Ctrl-C,
// SIGTERM, --duration or the handlers stop it; warns when nothing matched
// for --no_match_warning_s.
void RunLive(ShmEventLoop* loop, const std::vector<NodeChannel>& reports,
             const std::vector<NodeChannel>* bridges,
             const std::function<void(const Context&, const void*)>& on_report,
             const std::function<void(const std::string&, const Context&,
                                      const void*)>& on_bridge,
             const int64_t* matched, const std::set<std::string>* seen_names) {
  for (const NodeChannel& channel : reports) {
    loop->MakeRawWatcher(channel.channel, on_report);
  }
  if (bridges != nullptr) {
    for (const NodeChannel& channel : *bridges) {
      loop->MakeRawWatcher(channel.channel,
                           [&on_bridge, node = channel.node](
                               const Context& context, const void* data) {
                             on_bridge(node, context, data);
                           });
    }
  }
  if (FLAGS_duration > 0) {
    TimerHandler* stop = loop->AddTimer([loop]() { loop->Exit(); });
    loop->OnRun([&, stop]() {
      stop->Schedule(
          loop->monotonic_now() +
          std::chrono::nanoseconds(static_cast<int64_t>(FLAGS_duration * 1e9)));
    });
  }
  TimerHandler* no_match = loop->AddTimer([&]() {
    if (*matched > 0) return;
    LOG(WARNING) << "no timing report matched --application="
                 << FLAGS_application << " --pid=" << FLAGS_pid
                 << " --node=" << FLAGS_node << " in "
                 << FLAGS_no_match_warning_s << " s; reports seen from: "
                 << (seen_names->empty() ? std::string("nobody")
                                         : StrJoin(*seen_names, ", "))
                 << " (reading --shm_base=" << FLAGS_shm_base
                 << " with --config="
                 << (FLAGS_config.empty() ? "aos/aos_config.json, the default"
                                          : FLAGS_config)
                 << ")";
  });
  loop->OnRun([&]() {
    no_match->Schedule(loop->monotonic_now() +
                       std::chrono::nanoseconds(static_cast<int64_t>(
                           FLAGS_no_match_warning_s * 1e9)));
  });
  loop->Run();
}

int Main(int argc, char** argv) {
  if (argc > 1) {
    return Misuse(StrCat("unexpected argument '", argv[1],
                         "'; every option is a --flag (see --help)"));
  }
  if (FLAGS_format != "table" && FLAGS_format != "aos" &&
      FLAGS_format != "json" && FLAGS_format != "csv") {
    return Misuse(StrCat("--format=", FLAGS_format,
                         " is not one of table, aos, json, csv"));
  }
  if (!FLAGS_log.empty()) {
    for (const auto& [flag, set] :
         {std::pair{"--duration", FLAGS_duration != 0},
          std::pair{"--top", FLAGS_top},
          std::pair{"--metrics_port", FLAGS_metrics_port != 0}}) {
      if (set) {
        return Misuse(
            StrCat(flag, " watches live reports; drop it with --log"));
      }
    }
  }
  TimeUnit unit;
  if (!ParseTimeUnit(FLAGS_units, &unit)) {
    return Misuse(StrCat("--units=", FLAGS_units, " is not one of ns, us, ms"));
  }
  for (const auto& [flag, value] :
       {std::pair{"--count", static_cast<double>(FLAGS_count)},
        std::pair{"--top_rows", static_cast<double>(FLAGS_top_rows)},
        std::pair{"--duration", FLAGS_duration},
        std::pair{"--max_wakeup_latency_us", FLAGS_max_wakeup_latency_us},
        std::pair{"--max_path_age_us", FLAGS_max_path_age_us},
        std::pair{"--no_match_warning_s", FLAGS_no_match_warning_s}}) {
    if (value < 0 || std::isnan(value)) {
      return Misuse(StrCat(flag, "=", value, " is negative: give 0 or more"));
    }
  }
  // Output files are checked now, not after a long run.
  for (const auto& [flag, path] :
       {std::pair{"--histogram_file", FLAGS_histogram_file},
        std::pair{"--plot", FLAGS_plot}}) {
    if (path.empty()) continue;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
      return Misuse(
          StrCat("cannot write ", flag, "=", path, ": ", strerror(errno)));
    }
    close(fd);
  }
  // The configuration: the log's, or --config's.
  std::unique_ptr<logging::LogFileReader> log;
  std::optional<FlatbufferDetachedBuffer<Configuration>> config;
  if (!FLAGS_log.empty()) {
    auto opened = logging::OpenLogWithMemoryFlag(FLAGS_log);
    if (!opened.ok())
      return Misuse(StrCat("--log: ", opened.status().message()));
    log = std::move(opened).value();
  } else {
    auto read = ReadConfigFlag("aos/aos_config.json");
    if (!read.ok()) return Misuse(StrCat(read.status().message()));
    config.emplace(std::move(read).value());
  }
  if (FLAGS_metrics_port < 0 || FLAGS_metrics_port > 65535) {
    return Misuse(StrCat("--metrics_port=", FLAGS_metrics_port,
                         " is not a TCP port: give 1-65535 (0: off)"));
  }
  std::optional<MetricsServer> metrics;
  if (FLAGS_metrics_port > 0) {
    metrics.emplace();
    if (absl::Status status =
            metrics->Start(FLAGS_metrics_address, FLAGS_metrics_port);
        !status.ok()) {
      return Misuse(StrCat(status.message()));
    }
    std::cerr << kProgram << ": serving metrics on http://"
              << FLAGS_metrics_address << ":" << metrics->port()
              << "/metrics\n";
  }
  const Configuration& configuration =
      log != nullptr ? *log->configuration() : config->message();
  // Named when the reports do not fit it.
  const std::string config_used =
      log != nullptr
          ? StrCat("the log's own config (",
                   InlinePrintable(FLAGS_log, kPrintablePathMaxBytes), ")")
      : FLAGS_config.empty()
          ? std::string(
                "the built-in aos/aos.json (only /aos), as no --config was "
                "given")
          : StrCat("--config=",
                   InlinePrintable(FLAGS_config, kPrintablePathMaxBytes));
  const int config_channels = configuration.channels() == nullptr
                                  ? 0
                                  : configuration.channels()->size();
  bool said_config_mismatch = false;
  // Every report received, matched or not, tells where paths come from.
  PathDirectory directory(&configuration);
  auto format = [&](const timing::ReportContents& report, bool accumulated) {
    if (FLAGS_format == "json") {
      return TimingReportToJsonLine(report, configuration, accumulated,
                                    &directory) +
             "\n";
    }
    if (FLAGS_format == "aos") {
      return FormatTimingReportAos(report, configuration);
    }
    if (FLAGS_format == "csv") {
      // The summaries' rows say so: a plot of the windows over time would
      // otherwise end in a spike of the whole run's maximum.
      return AppendCsvColumn(
          TimingReportToCsvRows(report, configuration, &directory),
          accumulated ? "summary" : "report");
    }
    return FormatTimingTable(report, configuration, unit, &directory) + "\n";
  };
  std::set<std::string, std::less<>> applications;
  for (const std::string& name : std::vector<std::string>(
           absl::StrSplit(FLAGS_application, ',', absl::SkipEmpty()))) {
    applications.insert(name);
  }

  // Every node's /aos (in a multi-node config, "/aos" is each node's own
  // channel, forwarded to the others), or only --node's.
  auto report_channels =
      ChannelOnEachNode(configuration, "/aos", "aos.timing.Report",
                        std::string(kProgram), FLAGS_node);
  if (!report_channels.ok()) {
    return Misuse(StrCat(report_channels.status().message()));
  }
  if (log != nullptr) {
    // Reports of another layout would decode into wrong figures.
    for (const NodeChannel& c : *report_channels) {
      if (c.channel->schema() == nullptr) continue;
      if (absl::Status status =
              timing::CheckTimingReportSchema(*c.channel->schema());
          !status.ok()) {
        return Misuse(StrCat(
            "--log: ", InlinePrintable(FLAGS_log),
            ": this build cannot read its timing reports: ", status.message(),
            ". aos_dump --log prints them with the log's own schema"));
      }
    }
  }
  // The message bridges' view of the network, where there are bridges.
  auto bridge_channels = ChannelOnEachNode(
      configuration, "/aos", "aos.message_bridge.ClientStatistics",
      std::string(kProgram), FLAGS_node);

  // Live: a reader of other nodes' channels too, it runs as no node in
  // particular.
  std::optional<ShmEventLoop> loop;
  if (log == nullptr) {
    loop.emplace(&configuration, "aos_timing_report_streamer");
    loop->SkipTimingReport();
  }
  bool stop = false;
  if (FLAGS_format == "csv" && FLAGS_stream && !FLAGS_top) {
    std::string header = TimingReportCsvHeader();
    header.insert(header.size() - 1, ",window");
    std::cout << header;
  }
  TimingReportAccumulator accumulator;
  // --top: the latest window of each application.
  std::map<std::tuple<std::string, std::string, int>, timing::ReportContents>
      latest;
  // The latest ClientStatistics of each node's bridge (they count since the
  // bridge started, so the latest is the summary).
  std::map<std::string, std::vector<uint8_t>> latest_bridge_statistics;
  int64_t matched = 0;
  int64_t malformed = 0;
  std::set<std::string> warned;
  std::set<std::string> seen_names;
  auto on_report = [&](const Context& context, const void* data) {
    // --count reached: later reports are not shown. Live, Exit() already
    // stops the loop's deliveries; reading a log, this stops the rest.
    if (stop) return;
    const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data),
                                         context.size);
    // Validated once, here; everything below reads the decoded report.
    absl::StatusOr<timing::ReportContents> decoded =
        timing::DecodeTimingReport(bytes);
    if (!decoded.ok()) {
      ++malformed;
      const std::string message(decoded.status().message());
      if (warned.insert(message).second) {
        LOG(WARNING) << "ignoring a malformed timing report (queue index "
                     << context.queue_index << "): " << message
                     << "; further ones like it are only counted";
      }
      return;
    }
    const timing::ReportContents& report = *decoded;
    const timing::ReportHeader& header = report.header;
    seen_names.insert(header.name);
    if (const int largest = LargestChannelIndex(report);
        largest >= config_channels && !said_config_mismatch) {
      said_config_mismatch = true;
      std::cerr << kProgram << ": the reports of "
                << InlinePrintable(header.name) << "[" << header.pid
                << "] name channel " << largest << ", but the config read, "
                << config_used << ", has " << config_channels
                << (config_channels == 1 ? " channel" : " channels")
                << ": such channels print as <channel N?>; "
                << (log != nullptr
                        ? "the log's config does not match its reports"
                        : "give the config the system runs with "
                          "(--config=bazel-bin/examples/"
                          "pingpong_config.json for ping and pong)")
                << "\n";
    }
    // Before the filters: a route crosses applications that are not shown.
    directory.Learn(report);
    if (!applications.empty() && !applications.contains(header.name)) {
      return;
    }
    if (FLAGS_pid != 0 && header.pid != FLAGS_pid) return;
    if (!FLAGS_node.empty() && header.node != FLAGS_node) return;
    ++matched;
    accumulator.Add(report);
    if (metrics.has_value()) {
      metrics->Publish(
          RenderMetrics(accumulator.Summaries(), configuration, &directory));
    }
    if (FLAGS_top) {
      latest[{header.node, header.name, header.pid}] = report;
      std::vector<timing::ReportContents> windows;
      for (const auto& [key, window] : latest) windows.push_back(window);
      // A terminal is cleared and fitted; a file or a pipe gets plain
      // screens, a blank line apart.
      const Terminal terminal = QueryTerminal(STDOUT_FILENO);
      std::cout << (terminal.is_tty ? kClearScreen : "")
                << RenderTop(windows, configuration,
                             {.unit = unit,
                              .gate_us = FLAGS_max_wakeup_latency_us,
                              .max_rows = static_cast<size_t>(
                                  std::max(0, FLAGS_top_rows)),
                              .directory = &directory,
                              .path_gate_us = FLAGS_max_path_age_us,
                              .width = terminal.columns,
                              .height = terminal.is_tty ? terminal.rows : 0})
                << (terminal.is_tty ? "" : "\n") << std::flush;
    } else if (FLAGS_stream) {
      std::cout << format(report, false) << std::flush;
    }
    if (FLAGS_count > 0 && matched >= FLAGS_count) {
      stop = true;
      if (loop.has_value()) loop->Exit();
    }
  };
  const bool show_bridges =
      FLAGS_format == "table" && !FLAGS_top && bridge_channels.ok();
  auto on_bridge = [&](const std::string& node, const Context& context,
                       const void* data) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    flatbuffers::Verifier verifier(bytes, context.size);
    if (!verifier.VerifyBuffer<message_bridge::ClientStatistics>()) {
      ++malformed;
      return;
    }
    latest_bridge_statistics[node].assign(bytes, bytes + context.size);
    if (FLAGS_stream) {
      std::cout << FormatClientStatistics(
                       *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
                           bytes),
                       node, unit)
                << "\n"
                << std::flush;
    }
  };

  if (log != nullptr) {
    // Every report in the log, in the order they were sent.
    std::map<const Channel*, std::string> report_nodes;
    for (const NodeChannel& c : *report_channels) report_nodes[c.channel] = "";
    std::map<const Channel*, std::string> bridge_nodes;
    if (show_bridges) {
      for (const NodeChannel& c : *bridge_channels) {
        bridge_nodes[c.channel] = c.node;
      }
    }
    while (!stop) {
      std::optional<logging::LogMessage> message = log->Next();
      if (!message.has_value()) break;
      if (report_nodes.contains(message->channel)) {
        on_report(message->context, message->context.data);
      } else if (auto it = bridge_nodes.find(message->channel);
                 it != bridge_nodes.end()) {
        on_bridge(it->second, message->context, message->context.data);
      }
    }
    for (const std::string& problem : log->problems()) {
      std::cerr << kProgram << ": " << problem << "\n";
    }
    if (matched == 0) {
      std::cerr << kProgram << ": no timing report in " << FLAGS_log
                << " matched; reports seen from: "
                << (seen_names.empty() ? std::string("nobody")
                                       : StrJoin(seen_names, ", "))
                << "\n";
    }
  } else {
    RunLive(&*loop, *report_channels,
            show_bridges ? &*bridge_channels : nullptr, on_report, on_bridge,
            &matched, &seen_names);
  }

  const auto summaries = accumulator.Summaries();
  if (FLAGS_accumulate) {
    if (FLAGS_format == "aos") {
      std::cout << "\nAccumulated timing reports :\n\n";
    } else if (FLAGS_format == "table") {
      std::cout << "Summary: every report of each application added up\n\n";
    }
    for (const auto& summary : summaries) {
      std::cout << format(summary, true) << (FLAGS_format == "aos" ? "\n" : "");
    }
    for (const auto& [node, bytes] : latest_bridge_statistics) {
      std::cout << FormatClientStatistics(
                       *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
                           bytes.data()),
                       node, unit)
                << "\n";
    }
  }
  if (malformed > 0) {
    LOG(WARNING) << malformed << " malformed timing reports were ignored";
  }
  if (!FLAGS_histogram_file.empty()) {
    std::ofstream out(FLAGS_histogram_file);
    out << HistogramsAsGnuplotTable(summaries, configuration, &directory);
    if (!out) {
      std::cerr << "aos_timing_report_streamer: cannot write --histogram_file="
                << FLAGS_histogram_file << "\n";
      return 1;
    }
  }
  if (!FLAGS_plot.empty()) {
    std::vector<std::string> names;
    for (const auto& summary : summaries) names.push_back(summary.header.name);
    double seconds = 0;
    for (const auto& summary : summaries) {
      seconds = std::max(seconds, summary.header.window_ns() / 1e9);
    }
    const absl::Status plotted = WriteLatencyPlot(
        summaries, configuration, FLAGS_plot,
        StrCat("aos wakeup latency: ", StrJoin(names, ", "), ", ",
               FormatDuration(seconds * 1e6, TimeUnit::kMilliseconds), " s"));
    if (!plotted.ok()) return Misuse(StrCat(plotted.message()));
    std::cerr << kProgram << ": wrote " << FLAGS_plot << "\n";
    // Path ages, often far longer than wakeups, in a plot of their own.
    const std::vector<PlottedLatency> ages = PathAges(summaries, &directory);
    if (!ages.empty()) {
      const std::string path_plot = PathPlotFile(FLAGS_plot);
      const absl::Status aged = WriteLatencyPlot(
          ages, path_plot,
          StrCat("aos path age: ", StrJoin(names, ", "), ", ",
                 FormatDuration(seconds * 1e6, TimeUnit::kMilliseconds), " s"),
          kPathAgeAxis);
      if (!aged.ok()) return Misuse(StrCat(aged.message()));
      std::cerr << kProgram << ": wrote " << path_plot << "\n";
    }
  }
  // The gates: 1 if one failed, else 2 if one saw nothing to check.
  int status = 0;
  if (FLAGS_max_wakeup_latency_us > 0) {
    const WorstWakeup worst = FindWorstWakeup(summaries, configuration);
    if (summaries.empty()) {
      std::cerr << kProgram
                << ": --max_wakeup_latency_us: no timing report matched the "
                   "filters, so nothing was checked (exit 2)\n";
      status = 2;
    } else if (worst.max_us > FLAGS_max_wakeup_latency_us) {
      std::cerr << "FAILED: " << worst.what << " woke up " << worst.max_us
                << " us late, more than --max_wakeup_latency_us="
                << FLAGS_max_wakeup_latency_us << "\n";
      status = 1;
    }
  }
  if (FLAGS_max_path_age_us > 0) {
    const WorstPathAge worst = FindWorstPathAge(summaries, &directory);
    if (worst.paths == 0) {
      std::cerr << kProgram << ": --max_path_age_us: "
                << (summaries.empty()
                        ? "no timing report matched the filters"
                        : "no watcher or fetcher of the matching reports "
                          "reported a path age")
                << ", so nothing was checked (exit 2)\n";
      if (status == 0) status = 2;
    } else if (worst.max_us > FLAGS_max_path_age_us) {
      std::cerr << "FAILED: " << worst.what << ": got data " << worst.max_us
                << " us old, more than --max_path_age_us="
                << FLAGS_max_path_age_us << "\n";
      status = 1;
    }
  }
  return status;
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
