#ifndef AOS_TRACING_LTTNG_TRACE_POINTS_H_
#define AOS_TRACING_LTTNG_TRACE_POINTS_H_

// What the event loop tells LTTng, one inline function per event of the
// `aos` provider (aos_tracepoints.h, docs/lttng.md):
//
//   TraceTimerWakeup(&timing_, scheduled_ns, start_ns);
//   TraceCallbackStart(&timing_, scheduled_ns);
//   ... the handler ...
//   TraceCallbackEnd(&timing_);
//
// Cost: while no provider is loaded (libaos_lttng_tp.so not preloaded), or
// no session enables the event, each call is one load of the tracepoint's
// state and a not-taken branch (docs/lttng.md has the figure), plus
// whatever the caller's arguments cost: pass values at hand. Enabled,
// each call writes one event into a per-CPU lttng-ust ring buffer without
// allocating. Realtime-safe either way; thread-safe.
//
// Ids are the address of the callback's (sender's, fetcher's) timing entry:
// pass the same pointer to every call about one callback.

#include <cstdint>

#include "aos/tracing/lttng/aos_tracepoints.h"

namespace aos::tracing::lttng {

inline uint64_t Id(const void* callback) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(callback));
}

// Whether a session records aos:callback_register: callers build names only
// then.
inline bool RegisterEnabled() {
  return lttng_ust_tracepoint_enabled(aos, callback_register);
}

// Names `callback` (kind "timer", "phased loop", "watcher", "sender",
// "fetcher") of the loop `application`. Strings are copied into the event.
inline void TraceCallbackRegister(const void* callback, const char* kind,
                                  const char* name, const char* application) {
  lttng_ust_tracepoint(aos, callback_register, Id(callback), kind, name,
                       application);
}

// A handler starts; `event_time_ns` is what it serves (the timer's
// scheduled time, the message's monotonic_sent_time).
inline void TraceCallbackStart(const void* callback, int64_t event_time_ns) {
  lttng_ust_tracepoint(aos, callback_start, Id(callback), 0, event_time_ns);
}

// The handler started by the last TraceCallbackStart(callback) returned.
inline void TraceCallbackEnd(const void* callback) {
  lttng_ust_tracepoint(aos, callback_end, Id(callback));
}

// A timer scheduled for `scheduled_ns` started its handler at `actual_ns`.
inline void TraceTimerWakeup(const void* callback, int64_t scheduled_ns,
                             int64_t actual_ns) {
  lttng_ust_tracepoint(aos, timer_wakeup, Id(callback), scheduled_ns,
                       actual_ns);
}

// `sender` put `size` bytes into slot `queue_index` of `channel` (a
// nul-terminated name) at `sent_ns`.
inline void TraceSend(const void* sender, const char* channel,
                      uint32_t queue_index, uint64_t size, int64_t sent_ns) {
  lttng_ust_tracepoint(aos, message_send, Id(sender), channel, queue_index,
                       size, sent_ns);
}

// Watcher `callback` got slot `queue_index` of `channel`, sent at `sent_ns`.
inline void TraceReceive(const void* callback, const char* channel,
                         uint32_t queue_index, int64_t sent_ns) {
  lttng_ust_tracepoint(aos, message_receive, Id(callback), channel, queue_index,
                       sent_ns);
}

// Watcher or fetcher `callback` never saw `count` messages of `channel`.
inline void TraceLost(const void* callback, const char* channel,
                      uint32_t count) {
  lttng_ust_tracepoint(aos, messages_lost, Id(callback), channel, count);
}

}  // namespace aos::tracing::lttng

#endif  // AOS_TRACING_LTTNG_TRACE_POINTS_H_
