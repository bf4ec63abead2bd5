#include "examples/streamer_json_lines.h"

#include <sstream>

#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/json_to_flatbuffer.h"
#include "gtest/gtest.h"

namespace aos::testing {

std::vector<flatbuffers::DetachedBuffer> ParseStreamerJsonLines(
    const std::string& output) {
  const reflection::Schema& schema =
      *reflection::GetSchema(timing::StreamedReportBinarySchema::data());
  std::vector<flatbuffers::DetachedBuffer> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    // Liveness lines ({"applications": ...}) are not reports.
    if (line.empty() || line.starts_with("{\"applications\":")) continue;
    auto parsed =
        JsonToFlatbuffer(line, schema, {.source_name = "streamer output"});
    EXPECT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << line;
    if (parsed.ok()) lines.push_back(std::move(parsed).value());
  }
  return lines;
}

}  // namespace aos::testing
