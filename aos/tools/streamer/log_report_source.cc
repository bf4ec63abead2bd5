#include "aos/tools/streamer/log_report_source.h"

#include <iostream>

#include "aos/events/logging/log_memory_flag.h"
#include "aos/events/timing_report_codec.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {

absl::StatusOr<std::unique_ptr<LogReportSource>> LogReportSource::Open(
    std::string path) {
  auto opened = logging::OpenLogWithMemoryFlag(path);
  if (!opened.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--log: ", opened.status().message()));
  }
  return std::unique_ptr<LogReportSource>(
      new LogReportSource(std::move(path), std::move(opened).value()));
}

std::string LogReportSource::ConfigDescription() const {
  return StrCat("the log's own config (",
                InlinePrintable(path_, kPrintablePathMaxBytes), ")");
}

std::string LogReportSource::ConfigMismatchAdvice() const {
  return "the log's config does not match its reports";
}

absl::Status LogReportSource::Subscribe(
    const std::vector<NodeChannel>& reports,
    const std::vector<NodeChannel>& bridges,
    const std::vector<NodeChannel>& starters, ReportReceiver* receiver) {
  for (const NodeChannel& c : reports) {
    if (c.channel->schema() != nullptr) {
      if (absl::Status status =
              timing::CheckTimingReportSchema(*c.channel->schema());
          !status.ok()) {
        return absl::InvalidArgumentError(StrCat(
            "--log: ", InlinePrintable(path_),
            ": this build cannot read its timing reports: ", status.message(),
            ". aos_dump --log prints them with the log's own schema"));
      }
    }
    report_nodes_[c.channel] = "";
  }
  for (const NodeChannel& c : bridges) bridge_nodes_[c.channel] = c.node;
  for (const NodeChannel& c : starters) starter_nodes_[c.channel] = c.node;
  receiver_ = receiver;
  return absl::OkStatus();
}

void LogReportSource::Run() {
  while (!stopped_) {
    std::optional<logging::LogMessage> message = log_->Next();
    if (!message.has_value()) break;
    if (report_nodes_.contains(message->channel)) {
      receiver_->OnReport(message->context, message->context.data);
    } else if (auto it = bridge_nodes_.find(message->channel);
               it != bridge_nodes_.end()) {
      receiver_->OnBridgeStatistics(it->second, message->context,
                                    message->context.data);
    } else if (auto starter = starter_nodes_.find(message->channel);
               starter != starter_nodes_.end()) {
      receiver_->OnStarterStatus(starter->second, message->context,
                                 message->context.data);
    }
  }
}

void LogReportSource::SayWhatWasSeen() const {
  for (const std::string& problem : log_->problems()) {
    std::cerr << "aos_timing_report_streamer: " << problem << "\n";
  }
  if (receiver_->tally().matched == 0) {
    std::cerr << "aos_timing_report_streamer: no timing report in " << path_
              << " matched; reports seen from: "
              << receiver_->tally().SeenNames() << "\n";
  }
}

}  // namespace aos::streamer
