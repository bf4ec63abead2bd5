#ifndef AOS_TOOLS_STREAMER_HISTOGRAM_FILE_SINK_H_
#define AOS_TOOLS_STREAMER_HISTOGRAM_FILE_SINK_H_

// --histogram_file: on exit, the accumulated histograms as a gnuplot table
// (like Xenomai's latency -g), path ages last.

#include <string>

#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/tools/streamer/report_sink.h"

namespace aos::streamer {

class HistogramFileSink : public ReportSink {
 public:
  // Nothing is owned; both must outlive the sink.
  HistogramFileSink(std::string path, const Configuration* configuration,
                    const PathDirectory* directory)
      : path_(std::move(path)),
        configuration_(configuration),
        directory_(directory) {}

  // Writes the file (truncating it). Errors: "cannot write
  // --histogram_file=PATH".
  absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) override;

 private:
  std::string path_;
  const Configuration* configuration_;
  const PathDirectory* directory_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_HISTOGRAM_FILE_SINK_H_
