#include "aos/tools/streamer/report_dispatcher.h"

#include <algorithm>
#include <iostream>
#include <span>

#include "aos/network/client_statistics_generated.h"
#include "aos/util/printable.h"
#include "glog/logging.h"

namespace aos::streamer {
namespace {

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

}  // namespace

ReportDispatcher::ReportDispatcher(const StreamerOptions* options,
                                   ReportSource* source,
                                   PathDirectory* directory,
                                   std::vector<ReportSink*> sinks)
    : options_(options),
      source_(source),
      directory_(directory),
      sinks_(std::move(sinks)),
      config_channels_(source->configuration().channels() == nullptr
                           ? 0
                           : source->configuration().channels()->size()),
      liveness_(&source->configuration(), options) {}

void ReportDispatcher::OnReport(const Context& context, const void* data) {
  // Live, Stop() already ends the loop's deliveries; reading a log, this
  // ends the rest.
  if (stopped_) return;
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data),
                                       context.size);
  // Validated once, here; everything below reads the decoded report.
  absl::StatusOr<timing::ReportContents> decoded =
      timing::DecodeTimingReport(bytes);
  if (!decoded.ok()) {
    ++malformed_;
    const std::string message(decoded.status().message());
    if (warned_.insert(message).second) {
      LOG(WARNING) << "ignoring a malformed timing report (queue index "
                   << context.queue_index << "): " << message
                   << "; further ones like it are only counted";
    }
    return;
  }
  const timing::ReportContents& report = *decoded;
  tally_.seen_names.insert(report.header.name);
  liveness_.OnReport(report.header.node, report.header.name,
                     context.monotonic_event_time);
  CheckFitsConfig(report);
  // Before the filters: a route crosses applications that are not shown.
  directory_->Learn(report);
  if (!Matches(report.header)) return;
  ++tally_.matched;
  accumulator_.Add(report);
  for (ReportSink* sink : sinks_) sink->OnReport(report, accumulator_);
  ShowLiveness(context.monotonic_event_time);
  const int count = options_->flags.count;
  if (count > 0 && tally_.matched >= count) {
    stopped_ = true;
    source_->Stop();
  }
}

void ReportDispatcher::OnStarterStatus(const std::string& node,
                                       const Context& context,
                                       const void* data) {
  if (stopped_) return;
  const auto* bytes = static_cast<const uint8_t*>(data);
  flatbuffers::Verifier verifier(bytes, context.size);
  if (!verifier.VerifyBuffer<starter::Status>()) {
    ++malformed_;
    return;
  }
  liveness_.OnStarterStatus(node, *flatbuffers::GetRoot<starter::Status>(bytes),
                            context.monotonic_event_time);
  ShowLiveness(context.monotonic_event_time);
}

void ReportDispatcher::ShowLiveness(monotonic_clock::time_point now) {
  if (!liveness_.Advance(now)) return;
  const std::vector<ApplicationLiveness> applications =
      liveness_.Applications();
  for (ReportSink* sink : sinks_) sink->OnLiveness(applications);
}

void ReportDispatcher::OnBridgeStatistics(const std::string& node,
                                          const Context& context,
                                          const void* data) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  flatbuffers::Verifier verifier(bytes, context.size);
  if (!verifier.VerifyBuffer<message_bridge::ClientStatistics>()) {
    ++malformed_;
    return;
  }
  for (ReportSink* sink : sinks_) {
    sink->OnBridgeStatistics(node, std::span(bytes, context.size));
  }
}

void ReportDispatcher::CheckFitsConfig(const timing::ReportContents& report) {
  const int largest = LargestChannelIndex(report);
  if (largest < config_channels_ || said_config_mismatch_) return;
  said_config_mismatch_ = true;
  const timing::ReportHeader& header = report.header;
  std::cerr << "aos_timing_report_streamer: the reports of "
            << InlinePrintable(header.name) << "[" << header.pid
            << "] name channel " << largest << ", but the config read, "
            << source_->ConfigDescription() << ", has " << config_channels_
            << (config_channels_ == 1 ? " channel" : " channels")
            << ": such channels print as <channel N?>; "
            << source_->ConfigMismatchAdvice() << "\n";
}

bool ReportDispatcher::Matches(const timing::ReportHeader& header) const {
  const StreamerOptions& options = *options_;
  if (!options.applications.empty() &&
      !options.applications.contains(header.name)) {
    return false;
  }
  if (options.flags.pid != 0 && header.pid != options.flags.pid) return false;
  if (!options.flags.node.empty() && header.node != options.flags.node) {
    return false;
  }
  return true;
}

}  // namespace aos::streamer
