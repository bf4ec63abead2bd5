#ifndef AOS_EVENTS_LTTNG_CALLBACK_REGISTER_H_
#define AOS_EVENTS_LTTNG_CALLBACK_REGISTER_H_

#include "aos/events/event_loop.h"

namespace aos {

// Names every timer, phased loop, watcher, sender and fetcher of `loop` for
// LTTng: one aos:callback_register each (kind, name, and the loop's name as
// `application`), with the id the loop's other aos:* events carry for it
// (aos/tracing/lttng/aos_tracepoints.h, docs/lttng.md). Does nothing unless
// a session records aos:callback_register. The loop calls it once, when it
// starts running; it allocates (names), so never from a callback.
void TraceRegisterCallbacks(const EventLoop& loop);

}  // namespace aos

#endif  // AOS_EVENTS_LTTNG_CALLBACK_REGISTER_H_
