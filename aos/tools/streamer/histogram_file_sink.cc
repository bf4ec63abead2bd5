#include "aos/tools/streamer/histogram_file_sink.h"

#include <fstream>

#include "aos/events/timing_report_format.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {

absl::Status HistogramFileSink::Finish(
    const std::vector<timing::ReportContents>& summaries) {
  std::ofstream out(path_);
  out << HistogramsAsGnuplotTable(summaries, *configuration_, directory_);
  if (!out) {
    return absl::InvalidArgumentError(
        StrCat("cannot write --histogram_file=", path_));
  }
  return absl::OkStatus();
}

}  // namespace aos::streamer
