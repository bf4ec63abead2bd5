#include "aos/tracing/event_ring.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "glog/logging.h"

namespace aos::tracing {
namespace {

// Copies `text` into `field`, cut to fit, always NUL-terminated.
void CopyCut(std::string_view text, char* field, size_t field_bytes) {
  const size_t n = std::min(text.size(), field_bytes - 1);
  memcpy(field, text.data(), n);
  field[n] = '\0';
}

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kNone:
      return "none";
    case EventKind::kTimerStart:
      return "timer start";
    case EventKind::kTimerEnd:
      return "timer end";
    case EventKind::kWatcherStart:
      return "watcher start";
    case EventKind::kWatcherEnd:
      return "watcher end";
    case EventKind::kSend:
      return "send";
    case EventKind::kLost:
      return "lost";
    case EventKind::kMissedCycles:
      return "missed cycles";
    case EventKind::kTrigger:
      return "trigger";
    case EventKind::kRemoteReceive:
      return "remote receive";
  }
  return "unknown";
}

std::string_view TrackKindName(TrackKind kind) {
  switch (kind) {
    case TrackKind::kTimer:
      return "timer";
    case TrackKind::kPhasedLoop:
      return "phased loop";
    case TrackKind::kWatcher:
      return "watcher";
    case TrackKind::kChannel:
      return "channel";
  }
  return "unknown";
}

std::string_view TriggerReasonName(TriggerReason reason) {
  switch (reason) {
    case TriggerReason::kWakeupLatency:
      return "wakeup latency";
    case TriggerReason::kHandlerTime:
      return "handler time";
    case TriggerReason::kMissedCycles:
      return "missed cycles";
    case TriggerReason::kLostMessages:
      return "lost messages";
    case TriggerReason::kPathDeadline:
      return "path deadline";
  }
  return "unknown";
}

uint32_t RingCapacityFor(uint32_t events) {
  if (events == 0) return 0;
  return std::min(std::bit_ceil(events), kMaxRingEvents);
}

EventRing::EventRing(void* memory, uint32_t capacity,
                     const RingIdentity& identity)
    : header_(static_cast<RingHeader*>(memory)),
      records_(reinterpret_cast<Record*>(static_cast<char*>(memory) +
                                         kRecordsOffset)),
      mask_(capacity - 1) {
  CHECK(std::has_single_bit(capacity))
      << "an event ring's capacity must be a power of two, not " << capacity;
  CHECK_EQ(reinterpret_cast<uintptr_t>(memory) % alignof(Record), 0u)
      << "event ring memory must be aligned to " << alignof(Record);
  header_->layout_version = kRingLayoutVersion;
  header_->record_size = sizeof(Record);
  header_->capacity = capacity;
  header_->name_capacity = kNameCapacity;
  header_->pid = identity.pid;
  header_->names_count = 0;
  CopyCut(identity.boot_id, header_->boot_id, sizeof(header_->boot_id));
  CopyCut(identity.node, header_->node, sizeof(header_->node));
  CopyCut(identity.application, header_->application,
          sizeof(header_->application));
  // Last: a reader takes the ring for one only once the rest is there.
  std::atomic_thread_fence(std::memory_order_release);
  __atomic_store_n(&header_->magic, kRingMagic, __ATOMIC_RELEASE);
}

std::unique_ptr<EventRing> EventRing::InMemory(uint32_t capacity,
                                               const RingIdentity& identity) {
  void* memory = ::operator new (RingBytes(capacity), std::align_val_t{64});
  memset(memory, 0, RingBytes(capacity));
  auto ring = std::make_unique<EventRing>(memory, capacity, identity);
  ring->owned_ = memory;
  return ring;
}

EventRing::~EventRing() {
  if (owned_ != nullptr) ::operator delete (owned_, std::align_val_t{64});
}

void EventRing::ClearNames() { header_->names_count = 0; }

bool EventRing::HasName(TrackKind kind, uint16_t index) const {
  const NameEntry* const entries = reinterpret_cast<const NameEntry*>(
      reinterpret_cast<const char*>(header_) + kHeaderBytes);
  for (uint32_t i = 0; i < header_->names_count; ++i) {
    if (entries[i].kind == static_cast<uint8_t>(kind) &&
        entries[i].index == index) {
      return true;
    }
  }
  return false;
}

bool EventRing::AddName(TrackKind kind, uint16_t index, int32_t channel,
                        std::string_view name) {
  if (header_->names_count >= kNameCapacity) return false;
  NameEntry* const entries = reinterpret_cast<NameEntry*>(
      reinterpret_cast<char*>(header_) + kHeaderBytes);
  NameEntry& entry = entries[header_->names_count];
  entry.kind = static_cast<uint8_t>(kind);
  entry.index = index;
  entry.channel = channel;
  CopyCut(name, entry.name, sizeof(entry.name));
  ++header_->names_count;
  return true;
}

}  // namespace aos::tracing
