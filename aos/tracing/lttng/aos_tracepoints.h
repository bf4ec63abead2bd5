// The LTTng-UST tracepoint provider `aos`: what an event loop does, as trace
// events for lttng/babeltrace2/Trace Compass (docs/lttng.md).
//
// This is a provider header in lttng-ust 2.13's sense: it is read several
// times by <lttng/tracepoint-event.h>, so it has no ordinary include guard.
// Applications do not include it directly: they call the inline functions of
// aos/tracing/lttng/trace_points.h. The probes (what writes an event into a
// ring buffer) are compiled from aos_tracepoints.c into libaos_lttng_tp.so,
// which only a process that is being traced loads (LD_PRELOAD); without it a
// call site costs a load and a not-taken branch.
//
// Ids: `callback`, `sender` and `fetcher` are the address of the
// callback's (sender's, fetcher's) timing entry in its process: unique among
// the live callbacks of one process, pointer-sized as ros2_tracing's
// `callback`. aos:callback_register names them, once per id, when the loop
// starts running. Times are the loop's monotonic clock, in nanoseconds (in
// simulation, simulated time).

#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER aos

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "aos/tracing/lttng/aos_tracepoints.h"

#if !defined(AOS_TRACING_LTTNG_AOS_TRACEPOINTS_H_) || \
    defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define AOS_TRACING_LTTNG_AOS_TRACEPOINTS_H_

#include <lttng/tracepoint.h>
#include <stdint.h>

// A callback of the loop `application` (its event loop name), made before
// the loop ran: `kind` is "timer", "phased loop", "watcher", "sender" or
// "fetcher"; `name` the timer's name, or the channel's name and type.
LTTNG_UST_TRACEPOINT_EVENT(
    aos, callback_register,
    LTTNG_UST_TP_ARGS(uint64_t, callback, const char*, kind, const char*, name,
                      const char*, application),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, callback, callback)
            lttng_ust_field_string(kind, kind)
                lttng_ust_field_string(name, name)
                    lttng_ust_field_string(application, application)))

// A handler starts: ros2_tracing's ros2:callback_start, plus `event_time`
// (the timer's scheduled time, or the message's monotonic_sent_time).
// is_intra_process is always 0: every aos message crosses shared memory.
LTTNG_UST_TRACEPOINT_EVENT(
    aos, callback_start,
    LTTNG_UST_TP_ARGS(uint64_t, callback, int, is_intra_process, int64_t,
                      event_time),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, callback, callback)
            lttng_ust_field_integer(int, is_intra_process, is_intra_process)
                lttng_ust_field_integer(int64_t, event_time, event_time)))

// The handler returned: ros2_tracing's ros2:callback_end.
LTTNG_UST_TRACEPOINT_EVENT(aos, callback_end,
                           LTTNG_UST_TP_ARGS(uint64_t, callback),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(
                               uint64_t, callback, callback)))

// A timer (or phased loop) woke: scheduled for `scheduled_time`, handler
// started at `actual_time`; the difference is its wakeup latency.
LTTNG_UST_TRACEPOINT_EVENT(
    aos, timer_wakeup,
    LTTNG_UST_TP_ARGS(uint64_t, callback, int64_t, scheduled_time, int64_t,
                      actual_time),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, callback, callback)
            lttng_ust_field_integer(int64_t, scheduled_time, scheduled_time)
                lttng_ust_field_integer(int64_t, actual_time, actual_time)))

// A message was sent on `channel` into queue slot `queue_index` (what the
// receivers' aos:message_receive carry for the same message).
LTTNG_UST_TRACEPOINT_EVENT(
    aos, message_send,
    LTTNG_UST_TP_ARGS(uint64_t, sender, const char*, channel, uint32_t,
                      queue_index, uint64_t, size, int64_t, sent_time),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, sender, sender)
            lttng_ust_field_string(channel, channel)
                lttng_ust_field_integer(uint32_t, queue_index, queue_index)
                    lttng_ust_field_integer(uint64_t, size, size)
                        lttng_ust_field_integer(int64_t, sent_time, sent_time)))

// A watcher got the message in slot `queue_index` of `channel`, sent at
// `sent_time`; its aos:callback_start follows.
LTTNG_UST_TRACEPOINT_EVENT(
    aos, message_receive,
    LTTNG_UST_TP_ARGS(uint64_t, callback, const char*, channel, uint32_t,
                      queue_index, int64_t, sent_time),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, callback, callback)
            lttng_ust_field_string(channel, channel)
                lttng_ust_field_integer(uint32_t, queue_index, queue_index)
                    lttng_ust_field_integer(int64_t, sent_time, sent_time)))

// A watcher or fetcher never saw `count` messages of `channel` (overwritten
// before it read them, or damaged).
LTTNG_UST_TRACEPOINT_EVENT(
    aos, messages_lost,
    LTTNG_UST_TP_ARGS(uint64_t, callback, const char*, channel, uint32_t,
                      count),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(
        uint64_t, callback, callback) lttng_ust_field_string(channel, channel)
                            lttng_ust_field_integer(uint32_t, count, count)))

#endif  // AOS_TRACING_LTTNG_AOS_TRACEPOINTS_H_

#include <lttng/tracepoint-event.h>
