#ifndef AOS_TRACING_TRACE_TEST_EVENTS_H_
#define AOS_TRACING_TRACE_TEST_EVENTS_H_

// For the flight recorder's tests: trace events made by hand, and where a
// test writes its snapshot files.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "aos/testing/path.h"
#include "aos/tracing/chrome_trace.h"

namespace aos::tracing {

// `name` in the test's temporary directory.
inline std::string TempPath(std::string_view name) {
  return aos::testing::TestTempDir() + "/" + std::string(name);
}

// An event of category "aos"; `dur_ns` for complete ('X') events.
inline TraceEvent Event(char phase, std::string name, int pid, int tid,
                        int64_t ts_ns, int64_t dur_ns = 0) {
  TraceEvent event;
  event.phase = phase;
  event.name = std::move(name);
  event.category = "aos";
  event.pid = pid;
  event.tid = tid;
  event.ts_ns = ts_ns;
  event.dur_ns = dur_ns;
  return event;
}

}  // namespace aos::tracing

#endif  // AOS_TRACING_TRACE_TEST_EVENTS_H_
