#ifndef AOS_TRACING_RING_FLAGS_H_
#define AOS_TRACING_RING_FLAGS_H_

// The flight recorder's flags, read where an event loop makes its ring:
//   --trace_ring_events              events per ring (0: no ring)
//   --trace_wakeup_threshold_us      trigger when a wakeup is later (0: off)
//   --trace_handler_threshold_us     trigger when a handler is longer (0: off)
//   --trace_on_missed_cycles         trigger on a missed cycle
//   --trace_on_lost_messages         trigger on a lost message
//   --trace_on_path_deadline         trigger on a path deadline overrun
// docs/tracing.md says what each does.

#include <memory>
#include <string_view>

#include "aos/tracing/event_ring.h"

namespace aos::tracing {

// The ring a loop records into, per the flags: in memory when `shm_base`
// is empty (simulation), else a ring file under it (ring_file.h). Null
// when --trace_ring_events is 0, or when the file cannot be made (then
// one warning names the path and why: the loop runs unrecorded). A flag
// out of range ends the program in one line naming it. Before Run().
std::unique_ptr<EventRing> RingFromFlags(std::string_view shm_base,
                                         const RingIdentity& identity);

}  // namespace aos::tracing

#endif  // AOS_TRACING_RING_FLAGS_H_
