#include "aos/tools/streamer/streamer.h"

#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "aos/config_flag.h"
#include "aos/events/path_directory.h"
#include "aos/tools/node_channels.h"
#include "aos/tools/streamer/aos_sink.h"
#include "aos/tools/streamer/csv_sink.h"
#include "aos/tools/streamer/gates.h"
#include "aos/tools/streamer/histogram_file_sink.h"
#include "aos/tools/streamer/json_sink.h"
#include "aos/tools/streamer/live_report_source.h"
#include "aos/tools/streamer/log_report_source.h"
#include "aos/tools/streamer/metrics_sink.h"
#include "aos/tools/streamer/plot_sink.h"
#include "aos/tools/streamer/report_dispatcher.h"
#include "aos/tools/streamer/snapshot_sink.h"
#include "aos/tools/streamer/table_sink.h"
#include "aos/tools/streamer/top_sink.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::streamer {
namespace {

constexpr std::string_view kProgram = "aos_timing_report_streamer";

// One line naming the culprit; the caller exits 1.
int Misuse(std::string_view what) {
  std::cerr << kProgram << ": " << what << "\n";
  return 1;
}

// The source: the log's, or live shared memory read with --config's.
absl::StatusOr<std::unique_ptr<ReportSource>> OpenSource(
    const StreamerOptions& options) {
  if (options.from_log()) return LogReportSource::Open(options.flags.log);
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) return config.status();
  return std::make_unique<LiveReportSource>(std::move(config).value(),
                                            &options);
}

// The --format sink.
std::unique_ptr<TextReportSink> MakeTextSink(const StreamerOptions& options,
                                             const Configuration* config,
                                             const PathDirectory* directory) {
  switch (options.format) {
    case OutputFormat::kAos:
      return std::make_unique<AosSink>(&options, config, directory);
    case OutputFormat::kJson:
      return std::make_unique<JsonSink>(&options, config, directory);
    case OutputFormat::kCsv:
      return std::make_unique<CsvSink>(&options, config, directory);
    case OutputFormat::kTable:
      break;
  }
  return std::make_unique<TableSink>(&options, config, directory);
}

}  // namespace

int RunStreamer(const StreamerOptions& options) {
  absl::StatusOr<std::unique_ptr<ReportSource>> opened = OpenSource(options);
  if (!opened.ok()) return Misuse(StrCat(opened.status().message()));
  ReportSource& source = **opened;
  const Configuration& configuration = source.configuration();
  // Every report received, matched or not, tells where paths come from.
  PathDirectory directory(&configuration);

  // The sinks, in the order each report reaches them.
  std::vector<ReportSink*> sinks;
  std::unique_ptr<MetricsSink> metrics;
  if (options.flags.metrics_port > 0) {
    auto started = MetricsSink::Start(options, &configuration, &directory);
    if (!started.ok()) return Misuse(StrCat(started.status().message()));
    metrics = std::move(started).value();
    sinks.push_back(metrics.get());
  }
  std::unique_ptr<TopSink> top;
  if (options.flags.top) {
    top = std::make_unique<TopSink>(&options, &configuration, &directory);
    sinks.push_back(top.get());
  }
  std::unique_ptr<TextReportSink> text =
      MakeTextSink(options, &configuration, &directory);
  sinks.push_back(text.get());
  std::unique_ptr<SnapshotSink> snapshots;
  if (!options.flags.snapshot_dir.empty()) {
    snapshots = std::make_unique<SnapshotSink>(&options, &configuration);
    sinks.push_back(snapshots.get());
  }

  // Every node's /aos (in a multi-node config, "/aos" is each node's own
  // channel, forwarded to the others), or only --node's; and the message
  // bridges' view of the network, where there are bridges.
  auto report_channels =
      ChannelOnEachNode(configuration, "/aos", "aos.timing.Report",
                        std::string(kProgram), options.flags.node);
  if (!report_channels.ok()) {
    return Misuse(StrCat(report_channels.status().message()));
  }
  auto bridge_channels = ChannelOnEachNode(
      configuration, "/aos", "aos.message_bridge.ClientStatistics",
      std::string(kProgram), options.flags.node);
  std::vector<NodeChannel> bridges;
  if (options.shows_bridges() && bridge_channels.ok()) {
    bridges = *bridge_channels;
  }

  // What each node's starter says of its applications, where there is one
  // (the silent applications' lines say it).
  auto starter_channels =
      ChannelOnEachNode(configuration, "/aos", "aos.starter.Status",
                        std::string(kProgram), options.flags.node);
  std::vector<NodeChannel> starters;
  if (starter_channels.ok()) starters = *starter_channels;

  ReportDispatcher dispatcher(&options, &source, &directory, sinks);
  if (absl::Status status =
          source.Subscribe(*report_channels, bridges, starters, &dispatcher);
      !status.ok()) {
    return Misuse(StrCat(status.message()));
  }
  for (ReportSink* sink : sinks) sink->Start();
  source.Run();
  source.SayWhatWasSeen();

  const std::vector<timing::ReportContents> summaries =
      dispatcher.accumulator().Summaries();
  // stdout's summary first; the files after the warnings.
  for (ReportSink* sink : sinks) {
    if (absl::Status status = sink->Finish(summaries); !status.ok()) {
      return Misuse(StrCat(status.message()));
    }
  }
  if (dispatcher.malformed() > 0) {
    LOG(WARNING) << dispatcher.malformed()
                 << " malformed timing reports were ignored";
  }
  std::vector<std::unique_ptr<ReportSink>> files;
  if (!options.flags.histogram_file.empty()) {
    files.push_back(std::make_unique<HistogramFileSink>(
        options.flags.histogram_file, &configuration, &directory));
  }
  if (!options.flags.plot.empty()) {
    files.push_back(std::make_unique<PlotSink>(options.flags.plot,
                                               &configuration, &directory));
  }
  for (const auto& file : files) {
    if (absl::Status status = file->Finish(summaries); !status.ok()) {
      return Misuse(StrCat(status.message()));
    }
  }
  return GateExitStatus(options, summaries, configuration, &directory);
}

}  // namespace aos::streamer
