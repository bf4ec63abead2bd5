#include "aos/tools/streamer/top_sink.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "aos/tools/terminal.h"
#include "aos/tools/top_view.h"

namespace aos::streamer {

void TopSink::OnReport(const timing::ReportContents& report,
                       const TimingReportAccumulator& /*accumulator*/) {
  const timing::ReportHeader& header = report.header;
  latest_[{header.node, header.name, header.pid}] = report;
  std::vector<timing::ReportContents> windows;
  for (const auto& [key, window] : latest_) windows.push_back(window);
  const StreamerFlags& flags = options_->flags;
  const Terminal terminal = QueryTerminal(STDOUT_FILENO);
  std::cout << (terminal.is_tty ? kClearScreen : "")
            << RenderTop(windows, *configuration_,
                         {.unit = options_->unit,
                          .gate_us = flags.max_wakeup_latency_us,
                          .max_rows =
                              static_cast<size_t>(std::max(0, flags.top_rows)),
                          .directory = directory_,
                          .path_gate_us = flags.max_path_age_us,
                          .width = terminal.columns,
                          .height = terminal.is_tty ? terminal.rows : 0})
            << (terminal.is_tty ? "" : "\n") << silent_lines_ << std::flush;
}

void TopSink::OnLiveness(const std::vector<ApplicationLiveness>& applications) {
  silent_lines_ = SilentLines(applications);
}

}  // namespace aos::streamer
