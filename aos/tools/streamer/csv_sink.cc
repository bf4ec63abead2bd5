#include "aos/tools/streamer/csv_sink.h"

#include "aos/events/timing_report_format.h"

namespace aos::streamer {

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

std::string CsvSink::Format(const timing::ReportContents& report,
                            bool accumulated) const {
  return AppendCsvColumn(
      TimingReportToCsvRows(report, configuration(), directory()),
      accumulated ? "summary" : "report");
}

std::string CsvSink::Preamble() const {
  std::string header = TimingReportCsvHeader();
  header.insert(header.size() - 1, ",window");
  return header;
}

std::string CsvSink::SummaryHeading() const {
  return options().streams_text() ? "" : Preamble();
}

}  // namespace aos::streamer
