#ifndef AOS_TOOLS_STREAMER_JSON_SINK_H_
#define AOS_TOOLS_STREAMER_JSON_SINK_H_

// --format=json: one aos.timing.StreamedReport per line (strict JSON); the
// summaries say "accumulated".

#include "aos/tools/streamer/text_report_sink.h"

namespace aos::streamer {

class JsonSink : public TextReportSink {
 public:
  using TextReportSink::TextReportSink;

 protected:
  std::string Format(const timing::ReportContents& report,
                     bool accumulated) const override;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_JSON_SINK_H_
