#ifndef AOS_TOOLS_STREAMER_CSV_SINK_H_
#define AOS_TOOLS_STREAMER_CSV_SINK_H_

// --format=csv: a header, then one row per report entry and path (us), with
// a last column, window: "report", or "summary" for the summaries' rows (a
// plot of the windows over time would otherwise end in a spike of the whole
// run's maximum).

#include <string>
#include <string_view>

#include "aos/tools/streamer/text_report_sink.h"

namespace aos::streamer {

// `rows` (RFC 4180 CSV, each row ending in '\n') with `value` added as a
// last column: line breaks inside quoted fields are not row ends.
std::string AppendCsvColumn(std::string_view rows, std::string_view value);

class CsvSink : public TextReportSink {
 public:
  using TextReportSink::TextReportSink;

 protected:
  std::string Format(const timing::ReportContents& report,
                     bool accumulated) const override;
  // The header, with the window column: before the first streamed report.
  std::string Preamble() const override;
  // The header again where no report streamed (--stream=false, --top), so
  // the summaries' rows are a CSV file of their own; nothing otherwise.
  std::string SummaryHeading() const override;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_CSV_SINK_H_
