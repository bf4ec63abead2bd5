#ifndef AOS_IPC_LIB_SHARED_MEMORY_LAYOUT_H_
#define AOS_IPC_LIB_SHARED_MEMORY_LAYOUT_H_

// What one channel's queue file holds, byte for byte. Internal to ipc_lib.
//
//   offset 0          QueueHeader      magic, version, layout, hash, size,
//                                      initialised marker, next queue index
//   map.entries       uint64 x queue_size        the ring: packed entries
//   map.senders       SenderSlot x num_senders   owner + scratch state
//   map.watchers      WatcherSlot x num_watchers owner, pid, priority, check
//   map.messages      message x (queue_size + num_senders), each:
//                       MessageHeader | redzone | data | redzone
//
// Every region starts on a cache line. Only fixed-width integers and
// lock-free std::atomic live here: no pointers, nothing whose meaning depends
// on the process. docs/ipc.md explains the protocol over these fields.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "aos/events/path_origins.h"
#include "aos/ipc_lib/internal_only.h"
#include "aos/ipc_lib/process_robust_list.h"
#include "aos/ipc_lib/queue_memory.h"

namespace aos::ipc_lib::internal {

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint64_t>) == 8);
static_assert(sizeof(std::atomic<int32_t>) == 4);

inline constexpr size_t kCacheLine = 64;

// "AOSQUEUE" read as a little-endian uint64.
inline constexpr uint64_t kQueueMagic = 0x4555455551534f41ull;
// QueueHeader::initialised once the creator has finished; anything else
// means "not yet" (or "the creator died").
inline constexpr uint32_t kInitialisedMarker = 0x600dc0deu;

// Limits imposed by the packing below (checked when opening).
// Message indices fit in 20 bits of an entry; 0xfffff is never a message.
inline constexpr uint32_t kMaxMessages = (1u << 20) - 1;
// Sender slot numbers fit in 12 bits; kNoSenderSlot marks the initial
// entries, which no sender published.
inline constexpr uint32_t kNoSenderSlot = (1u << 12) - 1;
inline constexpr uint32_t kMaxSenders = kNoSenderSlot;
// Wakeup() orders watchers in an array on its stack.
inline constexpr uint32_t kMaxWatchers = 512;

inline constexpr size_t RoundUp(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

// The QueueLayout as stored in the file, fixed width.
struct StoredLayout {
  uint32_t message_data_size;
  uint32_t queue_size;
  uint32_t num_senders;
  uint32_t num_watchers;
  // Zero. Builds before layout version 2 was released kept num_readers
  // (which sized nothing) in its first half; keeping the other fields where
  // they were lets a file from them be refused naming its layout (its hash
  // differs).
  uint64_t reserved;
  int64_t channel_storage_duration_ns;
};
static_assert(sizeof(StoredLayout) == 32);

struct QueueHeader {
  uint64_t magic;
  uint32_t layout_version;
  uint32_t header_size;
  StoredLayout layout;
  uint64_t layout_hash;
  uint64_t memory_size;
  // kInitialisedMarker, stored last (release) by the creator. Openers load
  // it (acquire) before trusting anything else.
  std::atomic<uint32_t> initialised;
  uint32_t reserved;
  // The index the next message gets. Advanced by a CAS from i to i + 1 by
  // whoever sees message i published ("helping along").
  alignas(kCacheLine) std::atomic<uint64_t> next_queue_index;
};
static_assert(std::is_standard_layout_v<QueueHeader>);
static_assert(std::is_trivially_destructible_v<QueueHeader>);
static_assert(sizeof(QueueHeader) % kCacheLine == 0);

// One ring position: (low 32 bits of the queue index it holds) << 32 |
// (publishing sender slot) << 20 | (message index). The tag makes the
// publishing CAS immune to ABA; the slot lets the next publisher at this
// position finish that sender's bookkeeping (see SenderSlot).
struct Entry {
  static constexpr uint64_t Pack(uint64_t queue_index, uint32_t message,
                                 uint32_t slot) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(queue_index)) << 32) |
           (static_cast<uint64_t>(slot & 0xfff) << 20) | (message & 0xfffff);
  }
  static constexpr uint32_t Tag(uint64_t entry) {
    return static_cast<uint32_t>(entry >> 32);
  }
  static constexpr uint32_t Slot(uint64_t entry) {
    return static_cast<uint32_t>(entry >> 20) & 0xfff;
  }
  static constexpr uint32_t Message(uint64_t entry) {
    return static_cast<uint32_t>(entry) & 0xfffff;
  }
  static constexpr bool Holds(uint64_t entry, uint64_t queue_index) {
    return Tag(entry) == static_cast<uint32_t>(queue_index);
  }
};

// A sender slot's `state`: the slot's scratch message, and while a publish
// is in flight, the message it will get in exchange.
//   bit 63      pending: a publish of `scratch` at pending_index, replacing
//               `replacing`, may have happened
//   bits 32-62  replacing
//   bits 0-31   scratch
struct SenderState {
  static constexpr uint64_t kPending = 1ull << 63;
  static constexpr uint64_t Idle(uint32_t scratch) { return scratch; }
  static constexpr uint64_t Publishing(uint32_t scratch, uint32_t replacing) {
    return kPending | (static_cast<uint64_t>(replacing) << 32) | scratch;
  }
  static constexpr bool Pending(uint64_t state) { return state & kPending; }
  static constexpr uint32_t Scratch(uint64_t state) {
    return static_cast<uint32_t>(state);
  }
  static constexpr uint32_t Replacing(uint64_t state) {
    return static_cast<uint32_t>(state >> 32) & 0x7fffffff;
  }
};

// Every slot (sender or watcher) starts with these two words, the layout
// process_robust_list.h wants.
//   owner        0 = free, else OwnerWord(...) (robust_slots.h): the low 32
//                bits are the owning process's robust futex id, which the
//                kernel replaces with kOwnerDied when that process dies.
//   robust_next  the owner's robust list link: a pointer in the OWNER's
//                address space, read only by the kernel when the owner dies.
//                Nobody else ever interprets it.
struct alignas(kCacheLine) SenderSlot {
  std::atomic<uint64_t> owner;
  std::atomic<uint64_t> robust_next;
  std::atomic<uint64_t> state;
  // The queue index of the pending publish; written before `state` says
  // pending (release), read after seeing pending (acquire).
  std::atomic<uint64_t> pending_index;
};
static_assert(std::is_standard_layout_v<SenderSlot>);
static_assert(sizeof(SenderSlot) == kCacheLine);
static_assert(offsetof(SenderSlot, robust_next) - offsetof(SenderSlot, owner) ==
              kRobustEntryOffset);

struct alignas(kCacheLine) WatcherSlot {
  // The high half of `owner` is the watching thread's tid, so releasing (or
  // evicting a gone thread) is one CAS that can never free someone else's
  // registration; bit 63 says the registration is not complete yet.
  std::atomic<uint64_t> owner;
  std::atomic<uint64_t> robust_next;
  // Written after the claim, before the registering bit is cleared (release):
  // the process to signal, and the order to signal in.
  std::atomic<int32_t> pid;
  std::atomic<int32_t> priority;
  // WatcherCheck(owner, pid, priority): Wakeup signals nobody whose slot
  // does not check out, so damaged memory never makes a sender signal a
  // process that did not register.
  std::atomic<uint64_t> check;
};
static_assert(std::is_standard_layout_v<WatcherSlot>);
static_assert(sizeof(WatcherSlot) == kCacheLine);
static_assert(offsetof(WatcherSlot, robust_next) -
                  offsetof(WatcherSlot, owner) ==
              kRobustEntryOffset);

// A 64-bit mix (splitmix64's finaliser) of a watcher registration. Cheap:
// Wakeup computes it for every registered watcher.
constexpr uint64_t WatcherCheck(uint64_t owner, int32_t pid, int32_t priority) {
  uint64_t x = owner ^
               (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32 |
                static_cast<uint32_t>(priority)) ^
               0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline constexpr size_t kPathOriginWords = sizeof(PathOrigins::Raw) / 8;
static_assert(sizeof(PathOrigins::Raw) % 8 == 0);

// Written by the sender (relaxed) before publishing; read by readers
// (relaxed) between the two loads of the entry that prove it unchanged.
struct alignas(kCacheLine) MessageHeader {
  std::atomic<uint64_t> queue_index;
  std::atomic<int64_t> monotonic_sent_time;
  std::atomic<int64_t> realtime_sent_time;
  std::atomic<int64_t> monotonic_remote_time;
  std::atomic<int64_t> realtime_remote_time;
  std::atomic<uint32_t> remote_queue_index;
  std::atomic<uint32_t> size;
  // The 16 bytes of the source node's boot UUID, in memory order.
  std::atomic<uint64_t> source_boot_uuid[2];
  // The message's path origins (aos/events/path_origins.h): the count and
  // the dropped count (low and high 32 bits of the first word), then two
  // words per origin, of which only `count` are written and read.
  std::atomic<uint64_t> path_origins[kPathOriginWords];
};
static_assert(std::is_standard_layout_v<MessageHeader>);
static_assert(sizeof(MessageHeader) == 3 * kCacheLine);

inline constexpr size_t kRedzoneSize = 64;
// The redzone after the data also covers the padding up to the cache line.
inline constexpr size_t kMaxRedzoneAfter = kRedzoneSize + kCacheLine - 1;

// Byte `i` of a redzone. Never 0 or 0xff (the likeliest stray writes), and
// varying, so shifted copies show.
constexpr uint8_t RedzoneByte(size_t i) {
  return static_cast<uint8_t>(0x40 | ((i * 37 + 0x15) & 0x3f));
}

// Where everything is, for one layout.
struct MemoryMap {
  size_t entries = 0;
  size_t senders = 0;
  size_t watchers = 0;
  size_t messages = 0;
  size_t message_stride = 0;
  size_t redzone_after = 0;  // bytes after the data
  size_t total = 0;
  uint32_t num_messages = 0;

  static constexpr MemoryMap For(const QueueLayout& layout) {
    MemoryMap map;
    map.num_messages = layout.queue_size + layout.num_senders;
    map.entries = sizeof(QueueHeader);
    map.senders = RoundUp(
        map.entries + sizeof(uint64_t) * size_t{layout.queue_size}, kCacheLine);
    map.watchers = map.senders + sizeof(SenderSlot) * layout.num_senders;
    map.messages = map.watchers + sizeof(WatcherSlot) * layout.num_watchers;
    const size_t data = RoundUp(layout.message_data_size, kCacheLine);
    map.redzone_after = data - layout.message_data_size + kRedzoneSize;
    map.message_stride =
        sizeof(MessageHeader) + kRedzoneSize + data + kRedzoneSize;
    map.total = map.messages + map.message_stride * map.num_messages;
    return map;
  }
};

// Typed access to a mapping. Cheap to make (a few multiplications); no
// checks: callers pass indices they got from the layout, or indices read from
// shared memory that they have checked (IsMessage, slot < count): any word of
// the file may hold anything.
class QueueView {
 public:
  QueueView(void* base, const QueueLayout& layout)
      : base_(static_cast<char*>(base)),
        map_(MemoryMap::For(layout)),
        queue_size_(layout.queue_size),
        message_data_size_(layout.message_data_size) {}

  QueueHeader& header() const { return *reinterpret_cast<QueueHeader*>(base_); }
  std::atomic<uint64_t>& entry(uint32_t position) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base_ +
                                                    map_.entries)[position];
  }
  std::atomic<uint64_t>& entry_for(uint64_t queue_index) const {
    return entry(static_cast<uint32_t>(queue_index % queue_size_));
  }
  SenderSlot& sender(uint32_t slot) const {
    return reinterpret_cast<SenderSlot*>(base_ + map_.senders)[slot];
  }
  WatcherSlot& watcher(uint32_t slot) const {
    return reinterpret_cast<WatcherSlot*>(base_ + map_.watchers)[slot];
  }
  char* message(uint32_t message) const {
    return base_ + map_.messages + map_.message_stride * message;
  }
  MessageHeader& message_header(uint32_t message) const {
    return *reinterpret_cast<MessageHeader*>(this->message(message));
  }
  uint8_t* redzone_before(uint32_t message) const {
    return reinterpret_cast<uint8_t*>(this->message(message) +
                                      sizeof(MessageHeader));
  }
  uint8_t* data(uint32_t message) const {
    return redzone_before(message) + kRedzoneSize;
  }
  uint8_t* redzone_after(uint32_t message) const {
    return data(message) + message_data_size_;
  }
  size_t redzone_after_size() const { return map_.redzone_after; }

  // Whether `message` (read from shared memory) names a message.
  bool IsMessage(uint32_t message) const { return message < map_.num_messages; }

  uint32_t queue_size() const { return queue_size_; }
  uint32_t message_data_size() const { return message_data_size_; }
  uint32_t num_messages() const { return map_.num_messages; }
  const MemoryMap& map() const { return map_; }

 private:
  char* const base_;
  const MemoryMap map_;
  const uint32_t queue_size_;
  const uint32_t message_data_size_;
};

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_SHARED_MEMORY_LAYOUT_H_
