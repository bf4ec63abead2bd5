#ifndef AOS_TOOLS_STREAMER_TOP_SINK_H_
#define AOS_TOOLS_STREAMER_TOP_SINK_H_

// --top: one screen per report, like top: every application's latest
// window (top_view.h). A terminal is cleared and the screen fitted to it; a
// file or a pipe gets plain screens, a blank line apart.

#include <map>
#include <string>
#include <tuple>

#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/tools/streamer/report_sink.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

class TopSink : public ReportSink {
 public:
  // Nothing is owned; all must outlive the sink.
  TopSink(const StreamerOptions* options, const Configuration* configuration,
          const PathDirectory* directory)
      : options_(options),
        configuration_(configuration),
        directory_(directory) {}

  // Redraws the screen with `report` as its application's latest window.
  void OnReport(const timing::ReportContents& report,
                const TimingReportAccumulator& accumulator) override;
  // Keeps the silent applications, listed under the next screen.
  void OnLiveness(
      const std::vector<ApplicationLiveness>& applications) override;

 private:
  const StreamerOptions* options_;
  const Configuration* configuration_;
  const PathDirectory* directory_;
  // The latest window of each (node, application, pid).
  std::map<std::tuple<std::string, std::string, int>, timing::ReportContents>
      latest_;
  std::string silent_lines_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_TOP_SINK_H_
