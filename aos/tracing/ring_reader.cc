#include "aos/tracing/ring_reader.h"

#include <bit>
#include <cstring>

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

std::string FieldText(const char* field, size_t bytes) {
  return std::string(field, strnlen(field, bytes));
}

// The header, if the bytes hold a ring this code can read.
absl::StatusOr<const RingHeader*> CheckedHeader(
    std::span<const std::byte> bytes) {
  if (bytes.size() < kRecordsOffset) {
    return absl::DataLossError(
        StrCat("only ", bytes.size(), " bytes, less than a ring header"));
  }
  const RingHeader* header = reinterpret_cast<const RingHeader*>(bytes.data());
  const uint64_t magic = __atomic_load_n(&header->magic, __ATOMIC_ACQUIRE);
  if (magic != kRingMagic) {
    return absl::DataLossError("not an event ring (wrong magic)");
  }
  if (header->layout_version != kRingLayoutVersion) {
    return absl::FailedPreconditionError(
        StrCat("ring layout version ", header->layout_version,
               ", this reader knows ", kRingLayoutVersion));
  }
  if (header->record_size != sizeof(Record) ||
      header->name_capacity != kNameCapacity) {
    return absl::FailedPreconditionError(StrCat(
        "record size ", header->record_size, " and ", header->name_capacity,
        " names, this reader knows ", sizeof(Record), " and ", kNameCapacity));
  }
  if (!std::has_single_bit(header->capacity) ||
      header->capacity > kMaxRingEvents ||
      RingBytes(header->capacity) > bytes.size()) {
    return absl::DataLossError(
        StrCat("capacity ", header->capacity, " is no power of two up to ",
               kMaxRingEvents, " that fits in ", bytes.size(), " bytes"));
  }
  if (header->names_count > kNameCapacity) {
    return absl::DataLossError(StrCat(
        header->names_count, " names, more than the table's ", kNameCapacity));
  }
  return header;
}

}  // namespace

absl::StatusOr<RingCounters> ReadRingCounters(
    std::span<const std::byte> bytes) {
  absl::StatusOr<const RingHeader*> header = CheckedHeader(bytes);
  if (!header.ok()) return header.status();
  RingCounters counters;
  counters.trigger_count =
      (*header)->trigger_count.load(std::memory_order_acquire);
  counters.last_trigger_ns =
      (*header)->last_trigger_ns.load(std::memory_order_relaxed);
  counters.written = (*header)->written.load(std::memory_order_acquire);
  return counters;
}

absl::StatusOr<RingCopy> CopyRing(std::span<const std::byte> bytes) {
  absl::StatusOr<const RingHeader*> checked = CheckedHeader(bytes);
  if (!checked.ok()) return checked.status();
  const RingHeader& header = **checked;
  RingCopy copy;
  copy.pid = header.pid;
  copy.boot_id = FieldText(header.boot_id, sizeof(header.boot_id));
  copy.node = FieldText(header.node, sizeof(header.node));
  copy.application = FieldText(header.application, sizeof(header.application));
  copy.capacity = header.capacity;
  copy.trigger_count = header.trigger_count.load(std::memory_order_acquire);
  copy.last_trigger_ns = header.last_trigger_ns.load(std::memory_order_relaxed);
  const NameEntry* entries =
      reinterpret_cast<const NameEntry*>(bytes.data() + kHeaderBytes);
  for (uint32_t i = 0; i < header.names_count; ++i) {
    const NameEntry& entry = entries[i];
    copy.names.push_back(
        TrackName{.kind = static_cast<TrackKind>(entry.kind),
                  .index = entry.index,
                  .channel = entry.channel,
                  .name = FieldText(entry.name, sizeof(entry.name))});
  }
  const Record* records =
      reinterpret_cast<const Record*>(bytes.data() + kRecordsOffset);
  const uint64_t written = header.written.load(std::memory_order_acquire);
  copy.written = written;
  const uint64_t first =
      written > header.capacity ? written - header.capacity : 0;
  copy.events.reserve(written - first);
  for (uint64_t n = first; n < written; ++n) {
    const Record& slot = records[n & (header.capacity - 1)];
    const uint64_t before = slot.sequence.load(std::memory_order_acquire);
    Event event;
    event.sequence = n;
    event.monotonic_ns = slot.monotonic_ns;
    event.aux_ns = slot.aux_ns;
    event.queue_index = slot.queue_index;
    event.index = slot.index;
    const uint8_t kind = slot.kind;
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t after = slot.sequence.load(std::memory_order_relaxed);
    if (before != n + 1 || after != n + 1 ||
        kind > static_cast<uint8_t>(EventKind::kRemoteReceive) ||
        kind == static_cast<uint8_t>(EventKind::kNone)) {
      ++copy.torn;
      continue;
    }
    event.kind = static_cast<EventKind>(kind);
    copy.events.push_back(event);
  }
  return copy;
}

}  // namespace aos::tracing
