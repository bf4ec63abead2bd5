#ifndef AOS_TOOLS_STREAMER_AOS_SINK_H_
#define AOS_TOOLS_STREAMER_AOS_SINK_H_

// --format=aos: AOS's streamer layout (seconds, plus percentiles), and its
// "Accumulated timing reports :" heading over the summaries.

#include "aos/tools/streamer/text_report_sink.h"

namespace aos::streamer {

class AosSink : public TextReportSink {
 public:
  using TextReportSink::TextReportSink;

 protected:
  std::string Format(const timing::ReportContents& report,
                     bool accumulated) const override;
  std::string SummaryHeading() const override {
    return "\nAccumulated timing reports :\n\n";
  }
  std::string AfterSummary() const override { return "\n"; }
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_AOS_SINK_H_
