#ifndef EXAMPLES_STREAMER_JSON_LINES_H_
#define EXAMPLES_STREAMER_JSON_LINES_H_

// For tests: aos_timing_report_streamer --format=json's output, one
// aos.timing.StreamedReport per line, parsed with the streamer's own schema.
//
//   for (const auto& line : ParseStreamerJsonLines(streamer->Stdout())) {
//     const auto* streamed =
//         flatbuffers::GetRoot<timing::StreamedReport>(line.data());
//   }

#include <string>
#include <vector>

#include "flatbuffers/flatbuffers.h"

namespace aos::testing {

// Every non-empty line of `output` but the silent applications' lines,
// parsed; a line that does not parse is a test failure (naming the line)
// and is left out.
std::vector<flatbuffers::DetachedBuffer> ParseStreamerJsonLines(
    const std::string& output);

}  // namespace aos::testing

#endif  // EXAMPLES_STREAMER_JSON_LINES_H_
