#include "aos/tracing/ring_flags.h"

#include "absl/status/statusor.h"
#include "aos/tracing/ring_file.h"
#include "aos/util/flag_checks.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

DEFINE_int32(trace_ring_events, 8192,
             "Events each event loop's flight recorder ring holds, rounded up "
             "to a power of two (at most 262144); 0: no ring "
             "(docs/tracing.md).");
DEFINE_int64(trace_wakeup_threshold_us, 0,
             "Flight recorder trigger: a timer, phased loop or watcher that "
             "starts more than this many microseconds late; 0: off.");
DEFINE_int64(trace_handler_threshold_us, 0,
             "Flight recorder trigger: a handler that runs longer than this "
             "many microseconds; 0: off.");
DEFINE_bool(trace_on_missed_cycles, false,
            "Flight recorder trigger: a timer or phased loop that missed a "
            "cycle.");
DEFINE_bool(trace_on_lost_messages, false,
            "Flight recorder trigger: a watcher or fetcher that lost "
            "messages.");

DEFINE_bool(trace_on_path_deadline, false,
            "Flight recorder trigger: a watcher or fetcher that got a message "
            "older than its path deadline (SetPathDeadline, or the "
            "application's path_deadlines in the config).");

namespace aos::tracing {

std::unique_ptr<EventRing> RingFromFlags(std::string_view shm_base,
                                         const RingIdentity& identity) {
  ExitOnFlagError(CheckInRange("--trace_ring_events", FLAGS_trace_ring_events,
                               0, static_cast<int32_t>(kMaxRingEvents)));
  ExitOnFlagError(CheckInRange("--trace_wakeup_threshold_us",
                               FLAGS_trace_wakeup_threshold_us, int64_t{0},
                               int64_t{1'000'000'000}));
  ExitOnFlagError(CheckInRange("--trace_handler_threshold_us",
                               FLAGS_trace_handler_threshold_us, int64_t{0},
                               int64_t{1'000'000'000}));
  const uint32_t capacity =
      RingCapacityFor(static_cast<uint32_t>(FLAGS_trace_ring_events));
  if (capacity == 0) return nullptr;
  std::unique_ptr<EventRing> ring;
  if (shm_base.empty()) {
    ring = EventRing::InMemory(capacity, identity);
  } else {
    absl::StatusOr<std::unique_ptr<EventRing>> file =
        CreateRingFile(shm_base, capacity, identity);
    if (!file.ok()) {
      LOG(WARNING) << "event loop " << identity.application
                   << ": no flight recorder ring: " << file.status().message();
      return nullptr;
    }
    ring = std::move(*file);
  }
  TriggerThresholds thresholds;
  thresholds.wakeup_latency_ns = FLAGS_trace_wakeup_threshold_us * 1000;
  thresholds.handler_time_ns = FLAGS_trace_handler_threshold_us * 1000;
  thresholds.on_missed_cycles = FLAGS_trace_on_missed_cycles;
  thresholds.on_lost_messages = FLAGS_trace_on_lost_messages;
  thresholds.on_path_deadline = FLAGS_trace_on_path_deadline;
  ring->set_thresholds(thresholds);
  return ring;
}

}  // namespace aos::tracing
