#ifndef AOS_TRACING_CHROME_TRACE_READER_H_
#define AOS_TRACING_CHROME_TRACE_READER_H_

// A snapshot file aos_trace wrote (chrome_trace.h's JSON) read back into a
// Trace, for `aos_trace merge` and `aos_trace plot`.
//
//   absl::StatusOr<Trace> trace = ReadTrace("aos_trace.1.pi1.json");
//
// Never trusts the file: what is missing or of the wrong type, and pids,
// times and offsets no snapshot has, are an error naming the file and the
// field. Not for realtime code.

#include <string>

#include "absl/status/statusor.h"
#include "aos/tracing/chrome_trace.h"

namespace aos::tracing {

absl::StatusOr<Trace> ReadTrace(const std::string& path);

}  // namespace aos::tracing

#endif  // AOS_TRACING_CHROME_TRACE_READER_H_
