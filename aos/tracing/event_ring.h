#ifndef AOS_TRACING_EVENT_RING_H_
#define AOS_TRACING_EVENT_RING_H_

// The flight recorder's ring: what one event loop did lately, in a fixed
// block of memory that other processes may read while the loop writes.
//
//   std::unique_ptr<EventRing> ring = EventRing::InMemory(8192, identity);
//   ring->CallStart(EventKind::kTimerStart, 3, start_ns, scheduled_ns);
//   ...
//   ring->CallEnd(EventKind::kTimerEnd, 3, end_ns, start_ns);
//
// Layout (RingBytes(capacity) bytes, all little-endian as the machine is):
//   [0, kHeaderBytes)              RingHeader: magic, layout version, sizes,
//                                  pid, boot, node, application, counters
//   [kHeaderBytes, kRecordsOffset) kNameCapacity NameEntry: what a record's
//                                  callback or channel index names
//   [kRecordsOffset, end)          `capacity` (a power of two) Records
// Event n (counted from 0) goes to slot n % capacity. Its slot's `sequence`
// is 0 while it is written and n + 1 once it is complete (stored last, with
// release order): a reader copies a slot and keeps it only if the sequence
// read before and after the copy is the one it expected (ring_reader.h).
// A slot a killed writer left half written keeps sequence 0 and is skipped.
//
// One writer: the loop's thread. Any number of readers, in any process.
// Writing an event costs a few stores: no syscall, no lock, no allocation.
// Names are written before the loop runs (SetNames), never while it runs.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace aos::tracing {

// "aostrace" in ASCII.
inline constexpr uint64_t kRingMagic = 0x6563617274736f61ull;
// Bumped on any change of the layout: readers skip rings of another one.
inline constexpr uint32_t kRingLayoutVersion = 1;
inline constexpr size_t kHeaderBytes = 512;
inline constexpr uint32_t kNameCapacity = 256;
inline constexpr size_t kNameBytes = 120;
// Rings are at most this many events (8 MiB of records).
inline constexpr uint32_t kMaxRingEvents = 1u << 18;

enum class EventKind : uint8_t {
  kNone = 0,
  // index: callback; monotonic: handler start; aux: scheduled time.
  kTimerStart = 1,
  // index: callback; monotonic: handler end; aux: handler start.
  kTimerEnd = 2,
  // index: callback; queue_index: the message's; monotonic: handler start;
  // aux: the message's monotonic_sent_time.
  kWatcherStart = 3,
  kWatcherEnd = 4,
  // index: channel; queue_index: the message's; monotonic: sent time.
  kSend = 5,
  // index: channel; queue_index: how many messages; monotonic: when counted.
  kLost = 6,
  // index: callback; queue_index: how many cycles; monotonic: when counted.
  kMissedCycles = 7,
  // index: callback or channel; queue_index: TriggerReason; monotonic: when;
  // aux: the value that crossed the threshold (ns, or a count).
  kTrigger = 8,
  // Right after a kWatcherStart of a message another node sent (forwarded
  // by the message bridge). index: callback; queue_index: the message's on
  // the node that sent it; monotonic: handler start; aux: its send time
  // there, on that node's clock.
  kRemoteReceive = 9,
};
std::string_view EventKindName(EventKind kind);

enum class TrackKind : uint8_t {
  kTimer = 1,
  kPhasedLoop = 2,
  kWatcher = 3,
  // A channel this loop sends on, fetches or watches.
  kChannel = 4,
};
std::string_view TrackKindName(TrackKind kind);

enum class TriggerReason : uint32_t {
  kWakeupLatency = 1,
  kHandlerTime = 2,
  kMissedCycles = 3,
  kLostMessages = 4,
  // A message reached a watcher or fetcher older than its path deadline.
  kPathDeadline = 5,
};
std::string_view TriggerReasonName(TriggerReason reason);

// One event; 32 bytes, 32-aligned.
struct alignas(32) Record {
  std::atomic<uint64_t> sequence;
  int64_t monotonic_ns;
  int64_t aux_ns;
  uint32_t queue_index;
  uint16_t index;
  uint8_t kind;
  uint8_t reserved;
};
static_assert(sizeof(Record) == 32);

// What a callback index (kTimer, kPhasedLoop, kWatcher) or channel index
// (kChannel) is called. `channel`: a watcher's channel index, else -1.
struct NameEntry {
  uint8_t kind;
  uint8_t reserved;
  uint16_t index;
  int32_t channel;
  char name[kNameBytes];
};
static_assert(sizeof(NameEntry) == 128);

struct RingHeader {
  uint64_t magic;
  uint32_t layout_version;
  uint32_t record_size;
  uint32_t capacity;
  uint32_t name_capacity;
  int32_t pid;
  uint32_t names_count;
  // The boot, as text (a UUID); empty if unknown.
  char boot_id[40];
  char node[64];
  char application[64];
  // Events written so far: event n is complete once written > n.
  std::atomic<uint64_t> written;
  // Thresholds crossed (kTrigger records written), and the monotonic time
  // of the last; a recorder polls these.
  std::atomic<uint64_t> trigger_count;
  std::atomic<int64_t> last_trigger_ns;
};
static_assert(sizeof(RingHeader) <= kHeaderBytes);

inline constexpr size_t kRecordsOffset =
    kHeaderBytes + kNameCapacity * sizeof(NameEntry);

// Bytes of a ring of `capacity` records.
constexpr size_t RingBytes(uint32_t capacity) {
  return kRecordsOffset + size_t{capacity} * sizeof(Record);
}

// The smallest power of two >= `events`, at most kMaxRingEvents; 0 for 0.
uint32_t RingCapacityFor(uint32_t events);

// Who writes the ring.
struct RingIdentity {
  int32_t pid = 0;
  std::string_view boot_id;
  std::string_view node;
  std::string_view application;
};

// When the loop marks a trigger (0: never on that count).
struct TriggerThresholds {
  int64_t wakeup_latency_ns = 0;
  int64_t handler_time_ns = 0;
  bool on_missed_cycles = false;
  bool on_lost_messages = false;
  bool on_path_deadline = false;
};

class EventRing {
 public:
  // A ring laid out in `memory`, RingBytes(capacity) bytes aligned to 64,
  // that the caller keeps alive (and zeroed, e.g. a new file or mapping) as
  // long as this object. `capacity`: a power of two, 1 or more; aborts
  // otherwise. Identity strings longer than their fields are cut.
  EventRing(void* memory, uint32_t capacity, const RingIdentity& identity);
  // A ring in memory of its own (the simulated loop's).
  static std::unique_ptr<EventRing> InMemory(uint32_t capacity,
                                             const RingIdentity& identity);
  virtual ~EventRing();
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  void set_thresholds(const TriggerThresholds& thresholds) {
    thresholds_ = thresholds;
  }
  const TriggerThresholds& thresholds() const { return thresholds_; }

  // Empties the names table. Not while the loop runs.
  void ClearNames();
  // Names `index` of `kind`; false (and nothing written) when the table is
  // full. Names longer than kNameBytes - 1 are cut. Not while the loop runs.
  bool AddName(TrackKind kind, uint16_t index, int32_t channel,
               std::string_view name);
  // Whether the names table has an entry of `kind` for `index`.
  bool HasName(TrackKind kind, uint16_t index) const;

  // A handler started at `start_ns`, due at (timer) or sent at (watcher)
  // `due_ns`; marks a trigger if the wakeup latency is over the threshold.
  void CallStart(EventKind kind, uint16_t index, int64_t start_ns,
                 int64_t due_ns, uint32_t queue_index = 0) {
    Write(kind, index, queue_index, start_ns, due_ns);
    const int64_t latency = start_ns - due_ns;
    if (thresholds_.wakeup_latency_ns > 0 &&
        latency > thresholds_.wakeup_latency_ns) {
      Trigger(TriggerReason::kWakeupLatency, index, start_ns, latency);
    }
  }
  // A handler that started at `start_ns` ended at `end_ns`; marks a trigger
  // if the handler time is over the threshold.
  void CallEnd(EventKind kind, uint16_t index, int64_t end_ns,
               int64_t start_ns) {
    Write(kind, index, 0, end_ns, start_ns);
    if (thresholds_.handler_time_ns > 0 &&
        end_ns - start_ns > thresholds_.handler_time_ns) {
      Trigger(TriggerReason::kHandlerTime, index, end_ns, end_ns - start_ns);
    }
  }
  // The message a watcher just started for came from another node.
  void RemoteReceive(uint16_t index, uint32_t remote_queue_index,
                     int64_t start_ns, int64_t remote_sent_ns) {
    Write(EventKind::kRemoteReceive, index, remote_queue_index, start_ns,
          remote_sent_ns);
  }
  void Send(uint16_t channel, uint32_t queue_index, int64_t sent_ns) {
    Write(EventKind::kSend, channel, queue_index, sent_ns, 0);
  }
  void Lost(uint16_t channel, uint32_t count, int64_t now_ns) {
    Write(EventKind::kLost, channel, count, now_ns, 0);
    if (thresholds_.on_lost_messages) {
      Trigger(TriggerReason::kLostMessages, channel, now_ns, count);
    }
  }
  void MissedCycles(uint16_t callback, uint32_t count, int64_t now_ns) {
    Write(EventKind::kMissedCycles, callback, count, now_ns, 0);
    if (thresholds_.on_missed_cycles) {
      Trigger(TriggerReason::kMissedCycles, callback, now_ns, count);
    }
  }
  // A watcher (`index`: its callback) or fetcher (its channel) got a
  // message `age_ns` old, over its path deadline; marks a trigger if asked.
  void PathDeadline(uint16_t index, int64_t now_ns, int64_t age_ns) {
    if (thresholds_.on_path_deadline) {
      Trigger(TriggerReason::kPathDeadline, index, now_ns, age_ns);
    }
  }
  // Marks a trigger: a kTrigger record, and the header's count and time.
  void Trigger(TriggerReason reason, uint16_t index, int64_t now_ns,
               int64_t value) {
    Write(EventKind::kTrigger, index, static_cast<uint32_t>(reason), now_ns,
          value);
    header_->last_trigger_ns.store(now_ns, std::memory_order_relaxed);
    header_->trigger_count.fetch_add(1, std::memory_order_release);
  }

  // Writes one event (the calls above say what the fields hold).
  void Write(EventKind kind, uint16_t index, uint32_t queue_index,
             int64_t monotonic_ns, int64_t aux_ns) {
    const uint64_t n = next_;
    Record& slot = records_[n & mask_];
    slot.sequence.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    slot.monotonic_ns = monotonic_ns;
    slot.aux_ns = aux_ns;
    slot.queue_index = queue_index;
    slot.index = index;
    slot.kind = static_cast<uint8_t>(kind);
    slot.sequence.store(n + 1, std::memory_order_release);
    next_ = n + 1;
    header_->written.store(n + 1, std::memory_order_release);
  }

  uint32_t capacity() const { return mask_ + 1; }
  // The ring's bytes (RingBytes(capacity())), for a reader in this process.
  const void* memory() const { return header_; }
  uint64_t written() const { return next_; }

 private:
  RingHeader* const header_;
  Record* const records_;
  const uint32_t mask_;
  uint64_t next_ = 0;
  TriggerThresholds thresholds_;
  // InMemory's memory, freed with the ring.
  void* owned_ = nullptr;
};

}  // namespace aos::tracing

#endif  // AOS_TRACING_EVENT_RING_H_
