#include "aos/tools/streamer/table_sink.h"

#include <iostream>

#include "aos/events/timing_report_format.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/tools/bridge_statistics_format.h"

namespace aos::streamer {

std::string TableSink::Format(const timing::ReportContents& report,
                              bool /*accumulated*/) const {
  return FormatTimingTable(report, configuration(), options().unit,
                           directory()) +
         "\n";
}

void TableSink::OnBridgeStatistics(const std::string& node,
                                   std::span<const uint8_t> statistics) {
  latest_bridge_statistics_[node].assign(statistics.begin(), statistics.end());
  if (options().flags.stream) {
    std::cout << FormatClientStatistics(
                     *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
                         statistics.data()),
                     node, options().unit)
              << "\n"
              << std::flush;
  }
}

void TableSink::OnLiveness(
    const std::vector<ApplicationLiveness>& applications) {
  silent_lines_ = SilentLines(applications);
  if (options().streams_text() && !silent_lines_.empty()) {
    std::cout << silent_lines_ << "\n" << std::flush;
  }
}

absl::Status TableSink::Finish(
    const std::vector<timing::ReportContents>& summaries) {
  absl::Status status = TextReportSink::Finish(summaries);
  if (!options().flags.accumulate) return status;
  for (const auto& [node, bytes] : latest_bridge_statistics_) {
    std::cout << FormatClientStatistics(
                     *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
                         bytes.data()),
                     node, options().unit)
              << "\n";
  }
  if (!silent_lines_.empty()) std::cout << silent_lines_ << "\n";
  return status;
}

}  // namespace aos::streamer
