#ifndef AOS_TOOLS_STREAMER_JSON_SINK_H_
#define AOS_TOOLS_STREAMER_JSON_SINK_H_

// --format=json: one aos.timing.StreamedReport per line (strict JSON); the
// summaries say "accumulated". While a configured application is silent,
// a liveness line ({"applications": [...]}, LivenessJson) once a second.

#include "aos/tools/streamer/text_report_sink.h"

namespace aos::streamer {

class JsonSink : public TextReportSink {
 public:
  using TextReportSink::TextReportSink;

  void OnLiveness(
      const std::vector<ApplicationLiveness>& applications) override;

 protected:
  std::string Format(const timing::ReportContents& report,
                     bool accumulated) const override;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_JSON_SINK_H_
