#ifndef AOS_TOOLS_STREAMER_PLOT_SINK_H_
#define AOS_TOOLS_STREAMER_PLOT_SINK_H_

// --plot: on exit, the accumulated wakeup-latency histograms of the timers
// and watchers drawn into a PNG (OSADL style, with gnuplot); path ages, if
// any, into FILE_paths.png. Says on stderr what it wrote.

#include <string>

#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/tools/streamer/report_sink.h"

namespace aos::streamer {

class PlotSink : public ReportSink {
 public:
  // Nothing is owned; both must outlive the sink.
  PlotSink(std::string path, const Configuration* configuration,
           const PathDirectory* directory)
      : path_(std::move(path)),
        configuration_(configuration),
        directory_(directory) {}

  // Draws the plots. Errors (latency_plot.h): no gnuplot, nothing to plot,
  // gnuplot's own message, each naming the PNG.
  absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) override;

 private:
  std::string path_;
  const Configuration* configuration_;
  const PathDirectory* directory_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_PLOT_SINK_H_
