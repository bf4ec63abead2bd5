// Sending, reading and waking up on a queue in shared memory. The protocol
// (and why each step is ordered as it is) is in docs/ipc.md; the fields are
// in shared_memory_layout.h.

#include "aos/ipc_lib/lockless_queue.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/ipc_lib/robust_slots.h"
#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/ipc_lib/stderr_line.h"
#include "aos/ipc_lib/watcher_proof.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

#ifdef __SANITIZE_THREAD__
// ThreadSanitizer's dynamic annotations (in its runtime).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace aos::ipc_lib {

namespace internal {

std::atomic<int> crash_internal::crash_point{0};

void SetCrashPointForTesting(CrashPoint point) {
  crash_internal::crash_point.store(static_cast<int>(point),
                                    std::memory_order_relaxed);
}

void OrderWatchersByPriority(WatcherTarget* targets, size_t count) {
  std::sort(targets, targets + count,
            [](const WatcherTarget& a, const WatcherTarget& b) {
              if (a.priority != b.priority) return a.priority > b.priority;
              return a.slot < b.slot;
            });
}

}  // namespace internal

namespace {

using internal::CrashPoint;
using internal::Entry;
using internal::kPathOriginWords;
using internal::MaybeCrash;
using internal::MessageHeader;
using internal::OwnerDied;
using internal::OwnerExtra;
using internal::OwnerRegistering;
using internal::QueueView;
using internal::RobustSlots;
using internal::SenderSlot;
using internal::SenderState;
using internal::WatcherSlot;

// The one deliberate data race of the queue: a reader copies a message that
// a sender may be rewriting, then proves it was not (the second entry load
// in Read). ThreadSanitizer ignores fences, so it cannot follow that proof:
// under it, the copy is hidden from the race detector.
void CopyPayloadMayTear(void* destination, const void* source, size_t size) {
#ifdef __SANITIZE_THREAD__
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
  std::memcpy(destination, source, size);
#ifdef __SANITIZE_THREAD__
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
}

QueueView ViewOf(const QueueMemory* memory) {
  return QueueView(memory->base(), memory->layout());
}

RobustSlots SenderSlots(const QueueView& view, uint32_t count) {
  return RobustSlots(&view.sender(0).owner, sizeof(SenderSlot), count);
}

RobustSlots WatcherSlots(const QueueView& view, uint32_t count) {
  return RobustSlots(&view.watcher(0).owner, sizeof(WatcherSlot), count);
}

struct RedzonePattern {
  uint8_t bytes[internal::kMaxRedzoneAfter];
  constexpr RedzonePattern() : bytes() {
    for (size_t i = 0; i < internal::kMaxRedzoneAfter; ++i) {
      bytes[i] = internal::RedzoneByte(i);
    }
  }
};
constexpr RedzonePattern kRedzone;

bool RedzonesIntact(const QueueView& view, uint32_t message) {
  return std::memcmp(view.redzone_before(message), kRedzone.bytes,
                     internal::kRedzoneSize) == 0 &&
         std::memcmp(view.redzone_after(message), kRedzone.bytes,
                     view.redzone_after_size()) == 0;
}

void RestoreRedzones(const QueueView& view, uint32_t message) {
  std::memcpy(view.redzone_before(message), kRedzone.bytes,
              internal::kRedzoneSize);
  std::memcpy(view.redzone_after(message), kRedzone.bytes,
              view.redzone_after_size());
}

// What a pending publish in `state` (of sender slot `slot`) turned into: the
// slot's scratch if the publish never happened, else the message it
// replaced. Only valid while the publish cannot still happen (its sender is
// dead) and nobody has moved the ring position on: whoever moves it on
// finishes the publish first (FinishPublishOf), so a CAS on the state from
// `state` fails if that happened in between.
uint64_t RepairedState(const QueueView& view, uint32_t slot, uint64_t state) {
  const uint64_t index =
      view.sender(slot).pending_index.load(std::memory_order_relaxed);
  const bool published =
      view.entry_for(index).load(std::memory_order_acquire) ==
      Entry::Pack(index, SenderState::Scratch(state), slot);
  return SenderState::Idle(published ? SenderState::Replacing(state)
                                     : SenderState::Scratch(state));
}

// For a slot just claimed, possibly from a sender killed mid-send: settles
// which message is its scratch, so that it is never also in the ring.
void RepairSenderSlot(const QueueView& view, uint32_t slot) {
  std::atomic<uint64_t>& state_word = view.sender(slot).state;
  uint64_t state = state_word.load(std::memory_order_acquire);
  while (SenderState::Pending(state)) {
    if (state_word.compare_exchange_weak(
            state, RepairedState(view, slot, state), std::memory_order_acq_rel,
            std::memory_order_acquire)) {
      break;
    }
  }
}

// Called by a sender about to replace `entry` at `position`: if the sender
// that published `entry` has not yet recorded that it now owns the message
// it replaced (it is slow, or dead), records it for it. After this, the
// message in `entry` is nobody's but the ring's, so taking it is safe.
void FinishPublishOf(const QueueView& view, uint32_t num_senders,
                     const std::atomic<uint64_t>& position, uint64_t entry) {
  const uint32_t slot = Entry::Slot(entry);
  if (slot >= num_senders) return;  // An initial entry: nobody published it.
  SenderSlot& sender = view.sender(slot);
  uint64_t state = sender.state.load(std::memory_order_acquire);
  if (!SenderState::Pending(state) ||
      SenderState::Scratch(state) != Entry::Message(entry) ||
      !Entry::Holds(entry,
                    sender.pending_index.load(std::memory_order_relaxed))) {
    return;
  }
  // The state was loaded while `entry` was still in place (checked after),
  // so it describes the publish of `entry`, not a later one of the same
  // message by the same slot.
  if (position.load(std::memory_order_acquire) != entry) return;
  sender.state.compare_exchange_strong(
      state, SenderState::Idle(SenderState::Replacing(state)),
      std::memory_order_acq_rel, std::memory_order_relaxed);
}

uint64_t NextIndexOf(const QueueView& view) {
  const uint64_t next =
      view.header().next_queue_index.load(std::memory_order_acquire);
  // A sender may have published `next` without advancing it yet (or died
  // before it could).
  return Entry::Holds(view.entry_for(next).load(std::memory_order_acquire),
                      next)
             ? next + 1
             : next;
}

// "<channel>: no sender slot in <path> (num_senders 3): <why>".
absl::Status NoSlot(const QueueMemory& memory, std::string_view kind,
                    uint32_t count, const absl::Status& why) {
  return absl::Status(
      why.code(),
      aos::StrCat(memory.channel(), ": no ", kind, " slot in ", memory.path(),
                  " (num_", kind, "s ", count, "): ", why.message(),
                  why.code() == absl::StatusCode::kResourceExhausted
                      ? aos::StrCat("; raise the channel's num_", kind,
                                    "s or stop a ", kind)
                      : ""));
}

// A sent time from a message header (nanoseconds of `Clock`).
template <typename Clock>
typename Clock::time_point LoadTime(const std::atomic<int64_t>& field) {
  return typename Clock::time_point(
      typename Clock::duration(field.load(std::memory_order_relaxed)));
}

// Writes `origin` into the two header words at `words`.
void StorePathOrigin(const PathOrigin& origin, std::atomic<uint64_t>* words) {
  uint64_t parts[2];
  static_assert(sizeof(parts) == sizeof(PathOrigin));
  memcpy(parts, &origin, sizeof(parts));
  words[0].store(parts[0], std::memory_order_relaxed);
  words[1].store(parts[1], std::memory_order_relaxed);
}

// Writes `origins` (null: none) into a message header: the counts word, then
// only the origins there are. Unrolled (a send's path): one jump, then only
// the loads and stores of the words.
void StorePathOrigins(const PathOrigins* origins, MessageHeader* message) {
  if (origins == nullptr) {
    message->path_origins[0].store(0, std::memory_order_relaxed);
    return;
  }
  message->path_origins[0].store(
      origins->size() | uint64_t{origins->dropped()} << 32,
      std::memory_order_relaxed);
  const PathOrigin* const sent = origins->begin();
  std::atomic<uint64_t>* const words = &message->path_origins[1];
  static_assert(kMaxPathOrigins == 4, "one case per possible size");
  switch (origins->size()) {
    case 4:
      StorePathOrigin(sent[3], &words[6]);
      [[fallthrough]];
    case 3:
      StorePathOrigin(sent[2], &words[4]);
      [[fallthrough]];
    case 2:
      StorePathOrigin(sent[1], &words[2]);
      [[fallthrough]];
    case 1:
      StorePathOrigin(sent[0], &words[0]);
      [[fallthrough]];
    default:
      break;
  }
}

// Reads a message header's path origins as they are: the counts word, then
// as many origins as it says (at most kMaxPathOrigins, however damaged).
void LoadPathOrigins(const MessageHeader& header, PathOrigins::Raw* raw) {
  const uint64_t counts =
      header.path_origins[0].load(std::memory_order_relaxed);
  raw->count = static_cast<uint32_t>(counts);
  raw->dropped = static_cast<uint32_t>(counts >> 32);
  const uint32_t count = std::min<uint32_t>(raw->count, kMaxPathOrigins);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t words[2] = {
        header.path_origins[1 + 2 * i].load(std::memory_order_relaxed),
        header.path_origins[2 + 2 * i].load(std::memory_order_relaxed)};
    static_assert(sizeof(words) == sizeof(PathOrigin));
    memcpy(&raw->origins[i], words, sizeof(words));
  }
}

// What to do about a damaged file, at the end of every message about one.
std::string DeleteAdvice(const QueueMemory& memory) {
  return aos::StrCat("Stop every process using ", memory.path(),
                     ", then delete it");
}

}  // namespace

// ---------------------------------------------------------------- senders

absl::StatusOr<std::unique_ptr<QueueSender>> QueueSender::Make(
    QueueMemory* memory) {
  const QueueView view = ViewOf(memory);
  const uint32_t count = memory->layout().num_senders;
  const RobustSlots slots = SenderSlots(view, count);
  const pid_t pid = getpid();
  const absl::StatusOr<RobustSlots::Claimed> claimed =
      slots.Claim(static_cast<uint32_t>(pid));
  if (!claimed.ok()) return NoSlot(*memory, "sender", count, claimed.status());
  const uint32_t slot = claimed->slot;
  MaybeCrash(CrashPoint::kSenderAfterClaim);
  RepairSenderSlot(view, slot);
  const uint64_t state =
      view.sender(slot).state.load(std::memory_order_acquire);
  const uint32_t scratch = SenderState::Scratch(state);
  if (SenderState::Pending(state) || !view.IsMessage(scratch)) {
    slots.Release(slot, claimed->owner);
    return absl::FailedPreconditionError(aos::StrCat(
        memory->channel(), ": sender slot ", slot, " of ", memory->path(),
        " is corrupt (state ", state, ", ", view.num_messages(), " messages). ",
        DeleteAdvice(*memory)));
  }
  // A dead owner may have scribbled outside its buffer.
  RestoreRedzones(view, scratch);
  // Our writes into the scratch message must not become visible before the
  // ring change that took it out of the queue (see the fence in Send).
  std::atomic_thread_fence(std::memory_order_release);
  return std::unique_ptr<QueueSender>(
      new QueueSender(memory, slot, claimed->owner, scratch));
}

QueueSender::QueueSender(QueueMemory* memory, uint32_t slot, uint64_t owner,
                         uint32_t scratch)
    : memory_(memory), slot_(slot), owner_(owner), scratch_(scratch) {}

QueueSender::~QueueSender() {
  const QueueView view = ViewOf(memory_);
  SenderSlots(view, memory_->layout().num_senders).Release(slot_, owner_);
}

void* QueueSender::Data() { return ViewOf(memory_).data(scratch_); }

QueueSender::Result QueueSender::Corrupt(const char* what, uint64_t index,
                                         uint64_t value) {
  if (!reported_corruption_) {
    reported_corruption_ = true;
    internal::WriteStderrLine(
        "%s: cannot send on %s: %s (queue index %llu, value %llu); the "
        "shared memory is corrupt. Nothing is sent; later failures of this "
        "sender are not logged. Stop every process using %s, then delete it",
        memory_->channel().c_str(), memory_->path().c_str(), what,
        static_cast<unsigned long long>(index),
        static_cast<unsigned long long>(value), memory_->path().c_str());
  }
  return Result::kCorrupt;
}

void QueueSender::NoteImpossibleSentTime(uint64_t replaced_index,
                                         int64_t sent_ns, int64_t now_ns) {
  ++impossible_sent_times_;
  if (reported_impossible_time_) return;
  reported_impossible_time_ = true;
  internal::WriteStderrLine(
      "%s: message %llu in %s says it was sent at %lld ns, %.3f s in this "
      "machine's future (now %lld ns): the shared memory is corrupt. Its "
      "time is ignored and the send goes on; this sender counts such "
      "messages as impossible_sent_times in its timing report and says no "
      "more. Stop every process using %s, then delete it",
      memory_->channel().c_str(),
      static_cast<unsigned long long>(replaced_index), memory_->path().c_str(),
      static_cast<long long>(sent_ns),
      (static_cast<double>(sent_ns) - static_cast<double>(now_ns)) / 1e9,
      static_cast<long long>(now_ns), memory_->path().c_str());
}

size_t QueueSender::size() const { return memory_->layout().message_data_size; }

QueueSender::Result QueueSender::Send(size_t length,
                                      const MessageOrigin& origin,
                                      MessageInfo* sent) {
  const QueueView view = ViewOf(memory_);
  CHECK_LE(length, view.message_data_size())
      << ": message too long for " << memory_->path();
  SenderSlot& slot = view.sender(slot_);
  const uint32_t scratch = scratch_;
  if (!RedzonesIntact(view, scratch)) {
    RestoreRedzones(view, scratch);
    return Result::kInvalidRedzone;
  }

  const uint32_t queue_size = view.queue_size();
  const int64_t storage_ns = memory_->layout().channel_storage_duration_ns;
  const uint32_t num_senders = memory_->layout().num_senders;
  std::atomic<uint64_t>& next = view.header().next_queue_index;
  MessageHeader& message = view.message_header(scratch);
  while (true) {
    uint64_t index = next.load(std::memory_order_acquire);
    std::atomic<uint64_t>& position = view.entry_for(index);
    const uint64_t old_entry = position.load(std::memory_order_acquire);
    if (Entry::Holds(old_entry, index)) {
      // Published, but its sender has not advanced `next` (yet, or ever:
      // it may have died). Help it along.
      next.compare_exchange_strong(index, index + 1, std::memory_order_acq_rel,
                                   std::memory_order_relaxed);
      continue;
    }
    if (!Entry::Holds(old_entry, index - queue_size)) {
      // `next` moved on since we read it. If it did not, the position holds
      // an index it never can (only index - queue_size or index): damaged.
      if (next.load(std::memory_order_acquire) != index) continue;
      return Corrupt("the ring holds an impossible index", index, old_entry);
    }
    // After `next`: whoever published index - 1 read the clocks before we
    // could see it, so sent times never go backwards along indices.
    const monotonic_clock::time_point monotonic_now = monotonic_clock::now();
    const realtime_clock::time_point realtime_now = realtime_clock::now();
    const uint32_t replacing = Entry::Message(old_entry);
    if (!view.IsMessage(replacing) || replacing == scratch) {
      // Re-checked, so that a sender that published meanwhile (a new entry)
      // is not mistaken for damage.
      if (position.load(std::memory_order_acquire) != old_entry) continue;
      return Corrupt("the ring entry to replace names no message we may take",
                     index, old_entry);
    }
    if (index >= queue_size) {
      const int64_t oldest_sent =
          view.message_header(replacing).monotonic_sent_time.load(
              std::memory_order_relaxed);
      // Still the message of index - queue_size (not a reused one)?
      std::atomic_thread_fence(std::memory_order_acquire);
      if (position.load(std::memory_order_relaxed) != old_entry) continue;
      const __int128 age =
          static_cast<__int128>(monotonic_now.time_since_epoch().count()) -
          oldest_sent;
      if (age < -static_cast<__int128>(kSentTimeSlack.count())) {
        // Nobody on this machine sent it then: damage (or a forger who
        // would have every later send refused as too fast). Replace it.
        NoteImpossibleSentTime(index - queue_size, oldest_sent,
                               monotonic_now.time_since_epoch().count());
      } else if (age < storage_ns) {
        return Result::kMessagesSentTooFast;
      }
    }
    FinishPublishOf(view, num_senders, position, old_entry);

    const monotonic_clock::time_point monotonic_remote =
        origin.monotonic_remote_time == monotonic_clock::min_time
            ? monotonic_now
            : origin.monotonic_remote_time;
    const realtime_clock::time_point realtime_remote =
        origin.realtime_remote_time == realtime_clock::min_time
            ? realtime_now
            : origin.realtime_remote_time;
    const uint32_t remote_index =
        origin.remote_queue_index == kNoRemoteQueueIndex
            ? static_cast<uint32_t>(index)
            : origin.remote_queue_index;
    uint64_t boot_words[2];
    static_assert(sizeof(boot_words) == sizeof(UUID));
    memcpy(boot_words, origin.source_boot_uuid.bytes().data(),
           sizeof(boot_words));
    message.queue_index.store(index, std::memory_order_relaxed);
    message.monotonic_sent_time.store(monotonic_now.time_since_epoch().count(),
                                      std::memory_order_relaxed);
    message.realtime_sent_time.store(realtime_now.time_since_epoch().count(),
                                     std::memory_order_relaxed);
    message.monotonic_remote_time.store(
        monotonic_remote.time_since_epoch().count(), std::memory_order_relaxed);
    message.realtime_remote_time.store(
        realtime_remote.time_since_epoch().count(), std::memory_order_relaxed);
    message.remote_queue_index.store(remote_index, std::memory_order_relaxed);
    message.source_boot_uuid[0].store(boot_words[0], std::memory_order_relaxed);
    message.source_boot_uuid[1].store(boot_words[1], std::memory_order_relaxed);
    message.size.store(static_cast<uint32_t>(length),
                       std::memory_order_relaxed);
    StorePathOrigins(origin.path_origins, &message);

    // Record the exchange before making it, so whoever claims this slot
    // after we die can tell whether it happened (RepairSenderSlot).
    slot.pending_index.store(index, std::memory_order_relaxed);
    const uint64_t publishing = SenderState::Publishing(scratch, replacing);
    slot.state.store(publishing, std::memory_order_release);
    MaybeCrash(CrashPoint::kSendBeforePublish);

    uint64_t expected = old_entry;
    if (!position.compare_exchange_strong(
            expected, Entry::Pack(index, scratch, slot_),
            std::memory_order_acq_rel, std::memory_order_relaxed)) {
      // Another sender got `index` first. Nobody touches a state whose
      // publish did not happen, so a plain store undoes ours.
      slot.state.store(SenderState::Idle(scratch), std::memory_order_release);
      continue;
    }
    MaybeCrash(CrashPoint::kSendAfterPublish);
    // The replaced message is ours now. This CAS fails only if the next
    // publisher at this position already recorded that for us.
    uint64_t state = publishing;
    slot.state.compare_exchange_strong(state, SenderState::Idle(replacing),
                                       std::memory_order_acq_rel,
                                       std::memory_order_relaxed);
    MaybeCrash(CrashPoint::kSendBeforeAdvance);
    next.compare_exchange_strong(index, index + 1, std::memory_order_acq_rel,
                                 std::memory_order_relaxed);
    scratch_ = replacing;
    // The caller writes its next message into `replacing` after we return.
    // A reader still copying it (as index - queue_size) must be able to see
    // the ring change whenever it sees one of those writes.
    std::atomic_thread_fence(std::memory_order_release);

    if (sent != nullptr) {
      sent->monotonic_sent_time = monotonic_now;
      sent->realtime_sent_time = realtime_now;
      sent->monotonic_remote_time = monotonic_remote;
      sent->realtime_remote_time = realtime_remote;
      sent->remote_queue_index = remote_index;
      sent->source_boot_uuid = origin.source_boot_uuid;
      sent->queue_index = static_cast<uint32_t>(index);
      sent->size = static_cast<uint32_t>(length);
    }
    return Result::kGood;
  }
}

// ---------------------------------------------------------------- readers

QueueReader::QueueReader(QueueMemory* memory) : memory_(memory) {}

uint64_t QueueReader::NextIndex() const { return NextIndexOf(ViewOf(memory_)); }

QueueReader::Result QueueReader::Corrupt(uint64_t index, const char* what,
                                         uint64_t value) const {
  if (!reported_corruption_) {
    reported_corruption_ = true;
    internal::WriteStderrLine(
        "%s: message %llu in %s is corrupt: %s (%llu). Skipped and counted "
        "as lost; later corrupt messages on this reader are not logged. Stop "
        "every process using %s, then delete it",
        memory_->channel().c_str(), static_cast<unsigned long long>(index),
        memory_->path().c_str(), what, static_cast<unsigned long long>(value),
        memory_->path().c_str());
  }
  return Result::kCorrupt;
}

QueueReader::Result QueueReader::Read(uint64_t index, MessageInfo* info,
                                      void* data,
                                      PathOrigins::Raw* origins) const {
  const QueueView view = ViewOf(memory_);
  const uint32_t queue_size = view.queue_size();
  const uint32_t max_size = view.message_data_size();
  const std::atomic<uint64_t>& position = view.entry_for(index);
  uint64_t entry = position.load(std::memory_order_acquire);
  if (!Entry::Holds(entry, index)) {
    const uint64_t next = NextIndexOf(view);
    if (index >= next) return Result::kNothingNewYet;
    if (next - index > queue_size) return Result::kTooOld;
    // Published after we loaded the entry (a newer tag would have meant
    // next - index > queue_size above). Loaded again now, it must hold
    // `index`: `next` was advanced only after the entry was.
    entry = position.load(std::memory_order_acquire);
    if (!Entry::Holds(entry, index)) {
      const uint64_t next_now = NextIndexOf(view);
      if (next_now - index > queue_size) return Result::kTooOld;
      return Corrupt(index, "its ring entry holds another index", entry);
    }
  }

  const uint32_t message = Entry::Message(entry);
  if (!view.IsMessage(message)) {
    return Corrupt(index, "its ring entry names no message", entry);
  }
  const MessageHeader& header = view.message_header(message);
  const uint64_t stored_index =
      header.queue_index.load(std::memory_order_relaxed);
  const uint32_t size = header.size.load(std::memory_order_relaxed);
  MessageInfo result;
  result.monotonic_sent_time =
      LoadTime<monotonic_clock>(header.monotonic_sent_time);
  result.realtime_sent_time =
      LoadTime<realtime_clock>(header.realtime_sent_time);
  result.monotonic_remote_time =
      LoadTime<monotonic_clock>(header.monotonic_remote_time);
  result.realtime_remote_time =
      LoadTime<realtime_clock>(header.realtime_remote_time);
  result.remote_queue_index =
      header.remote_queue_index.load(std::memory_order_relaxed);
  const uint64_t boot_words[2] = {
      header.source_boot_uuid[0].load(std::memory_order_relaxed),
      header.source_boot_uuid[1].load(std::memory_order_relaxed)};
  result.source_boot_uuid =
      UUID::FromBytes(reinterpret_cast<const uint8_t*>(boot_words));
  result.queue_index = static_cast<uint32_t>(index);
  result.size = size;
  if (origins != nullptr) LoadPathOrigins(header, origins);
  // A torn size is caught below; never copy out of bounds because of it.
  if (size <= max_size && data != nullptr) {
    CopyPayloadMayTear(data, view.data(message) + max_size - size, size);
  }
  // Everything above happens before the second look at the entry: if any
  // of it saw a sender reusing the message, this load sees the ring change
  // that preceded the reuse (the sender fences between them).
  std::atomic_thread_fence(std::memory_order_acquire);
  if (position.load(std::memory_order_relaxed) != entry) {
    return Result::kTooOld;
  }
  // The entry stayed put, so nobody was allowed to write the message while
  // we copied it: what it says is what its sender wrote, or damage.
  if (stored_index != index) {
    return Corrupt(index, "its message records another queue index",
                   stored_index);
  }
  if (size > max_size) {
    return Corrupt(index, "its message is larger than max_size", size);
  }
  // A true sent time is never later than a clock read after the message
  // was published (the acquire loads above). An earlier reading vouches
  // for most messages already, so the clock is read only when it cannot:
  // at high rates, about once per kSentTimeSlack.
  if (result.monotonic_sent_time > latest_now_ + kSentTimeSlack) {
    latest_now_ = monotonic_clock::now();
    if (result.monotonic_sent_time > latest_now_ + kSentTimeSlack) {
      return Corrupt(
          index, "its sent time (ns) is in this machine's future",
          static_cast<uint64_t>(
              result.monotonic_sent_time.time_since_epoch().count()));
    }
  }
  if (info != nullptr) *info = result;
  return Result::kGood;
}

// ---------------------------------------------------------------- watchers

int WakeupSignal() { return SIGRTMIN + 2; }

absl::StatusOr<std::unique_ptr<QueueWatcher>> QueueWatcher::Make(
    QueueMemory* memory, pid_t pid, pid_t tid, int priority) {
  CHECK_EQ(pid, getpid())
      << ": a watcher slot belongs to the process that registers it";
  CHECK_GT(tid, 0);
  const QueueView view = ViewOf(memory);
  const uint32_t count = memory->layout().num_watchers;
  const RobustSlots slots = WatcherSlots(view, count);
  const absl::StatusOr<RobustSlots::Claimed> claimed =
      slots.Claim(static_cast<uint32_t>(tid), /*registering=*/true);
  if (!claimed.ok()) return NoSlot(*memory, "watcher", count, claimed.status());
  MaybeCrash(CrashPoint::kWatcherAfterClaim);
  WatcherSlot& slot = view.watcher(claimed->slot);
  slot.pid.store(pid, std::memory_order_relaxed);
  slot.priority.store(priority, std::memory_order_relaxed);
  const uint64_t registered = claimed->owner & ~internal::kRegistering;
  slot.check.store(internal::WatcherCheck(registered, pid, priority),
                   std::memory_order_relaxed);
  // Complete: Wakeup, having seen this (acquire), sees the fields above.
  // Sequentially consistent, like the senders' CASes, so that a message
  // published after our caller next reads the queue's NextIndex() is
  // followed by a Wakeup that sees us.
  uint64_t expected = claimed->owner;
  if (!slots.owner(claimed->slot)
           .compare_exchange_strong(expected, registered,
                                    std::memory_order_seq_cst)) {
    slots.Release(claimed->slot, claimed->owner);
    return absl::FailedPreconditionError(aos::StrCat(
        memory->channel(), ": watcher slot ", claimed->slot, " of ",
        memory->path(), " changed while we registered (owner ", expected,
        "): the shared memory is corrupt. ", DeleteAdvice(*memory)));
  }
  return std::unique_ptr<QueueWatcher>(
      new QueueWatcher(memory, claimed->slot, registered));
}

QueueWatcher::QueueWatcher(QueueMemory* memory, uint32_t slot, uint64_t owner)
    : memory_(memory), slot_(slot), owner_(owner) {}

QueueWatcher::~QueueWatcher() {
  const QueueView view = ViewOf(memory_);
  WatcherSlots(view, memory_->layout().num_watchers).Release(slot_, owner_);
}

QueueWakeUpper::QueueWakeUpper(QueueMemory* memory)
    : memory_(memory),
      known_(new KnownRegistration[memory->layout().num_watchers]) {}

void QueueWakeUpper::Forget(KnownRegistration* known) {
  *known = KnownRegistration();  // Closes its pidfd.
}

void QueueWakeUpper::SayRefused(uint32_t slot, int32_t pid, int32_t tid,
                                const char* why) {
  if (said_refused_) return;
  said_refused_ = true;
  char name[64];
  internal::ProcessName(pid, name, sizeof(name));
  internal::WriteStderrLine(
      "%s: not signalling watcher slot %u of %s: thread %d of process %d "
      "(\"%s\") %s. The registration is forged or stale (the file was "
      "written by something other than aos); this sender counts every "
      "wakeup it skips as refused_wakeups in its timing report and says no "
      "more. Stop every process using %s, then delete it",
      memory_->channel().c_str(), slot, memory_->path().c_str(), tid, pid, name,
      why, memory_->path().c_str());
}

const QueueWakeUpper::KnownRegistration* QueueWakeUpper::Know(
    uint32_t slot, uint64_t owner, int32_t pid, int32_t priority) {
  KnownRegistration& known = known_[slot];
  if (known.owner == owner && known.pid == pid && known.priority == priority) {
    return &known;
  }
  Forget(&known);
  internal::WatcherProof proof =
      internal::ProveWatcher(pid, static_cast<pid_t>(OwnerExtra(owner)),
                             internal::OwnerId(owner), WakeupSignal());
  if (proof.verdict == internal::WatcherProof::Verdict::kGone) {
    // The thread is gone (its process may live on). Free its slot unless it
    // changed hands since.
    WatcherSlots(ViewOf(memory_), memory_->layout().num_watchers)
        .Evict(slot, owner);
    return nullptr;
  }
  known.owner = owner;
  known.pid = pid;
  known.priority = priority;
  known.proven = proof.verdict == internal::WatcherProof::Verdict::kProven;
  known.pidfd = std::move(proof.pidfd);
  if (!known.proven) {
    SayRefused(slot, pid, static_cast<pid_t>(OwnerExtra(owner)), proof.why);
  }
  return &known;
}

void QueueWakeUpper::AuditRegistrations() {
  const QueueMemory::FileIdentity& file = memory_->identity();
  for (uint32_t slot = 0; slot < memory_->layout().num_watchers; ++slot) {
    KnownRegistration& known = known_[slot];
    if (known.owner == 0 || !known.proven || known.audited) continue;
    known.audited = true;
    if (internal::ProcessMapsFile(known.pid,
                                  internal::FileId{file.device, file.inode}) !=
        internal::MapsAnswer::kDoesNotMap) {
      continue;
    }
    // Refused from now on; its words stay known, so it is not proven again.
    known.pidfd.reset();
    known.proven = false;
    SayRefused(slot, known.pid, static_cast<pid_t>(OwnerExtra(known.owner)),
               "does not map the queue's file");
  }
}

int QueueWakeUpper::Wakeup() {
  const QueueView view = ViewOf(memory_);
  const uint32_t count = memory_->layout().num_watchers;
  const RobustSlots slots = WatcherSlots(view, count);
  // Bounded by kMaxWatchers (checked when the queue was opened).
  internal::WatcherTarget targets[internal::kMaxWatchers];
  size_t found = 0;
  for (uint32_t slot = 0; slot < count; ++slot) {
    const uint64_t owner = slots.owner(slot).load(std::memory_order_acquire);
    // Free, dead (the kernel said so), or not registered yet.
    if (owner == 0 || OwnerDied(owner) || OwnerRegistering(owner)) {
      if (known_[slot].owner != 0) Forget(&known_[slot]);
      continue;
    }
    const WatcherSlot& watcher = view.watcher(slot);
    const pid_t pid = watcher.pid.load(std::memory_order_relaxed);
    const int32_t priority = watcher.priority.load(std::memory_order_relaxed);
    if (watcher.check.load(std::memory_order_relaxed) !=
        internal::WatcherCheck(owner, pid, priority)) {
      // Signal nobody on its word. If the slot changed hands while we read
      // it, that is a new registration, not damage.
      if (slots.owner(slot).load(std::memory_order_acquire) == owner) {
        ++refused_wakeups_;
        SayRefused(slot, pid, static_cast<pid_t>(OwnerExtra(owner)),
                   "has a check word that does not match its fields");
      }
      continue;
    }
    const KnownRegistration* known = Know(slot, owner, pid, priority);
    if (known == nullptr) continue;  // Gone, and evicted.
    if (!known->proven) {
      ++refused_wakeups_;
      continue;
    }
    targets[found++] = internal::WatcherTarget{
        slot, pid, static_cast<pid_t>(OwnerExtra(owner)), priority, owner};
  }
  internal::OrderWatchersByPriority(targets, found);
  const int signal = WakeupSignal();
  int signalled = 0;
  for (size_t i = 0; i < found; ++i) {
    const internal::WatcherTarget& target = targets[i];
    KnownRegistration& known = known_[target.slot];
    const int error = internal::SignalWatcher(known.pidfd.get(), target.pid,
                                              target.tid, signal);
    if (error == 0 || error == EAGAIN) {
      // EAGAIN: its signal queue is full: it has wakeups pending already.
      ++signalled;
    } else if (error == ESRCH) {
      // The thread is gone (its process may live on). Free its slot unless
      // it changed hands since.
      slots.Evict(target.slot, target.owner);
      Forget(&known);
    }
  }
  return signalled;
}

// ---------------------------------------------------------------- checks

namespace internal {

std::string CheckQueueInvariants(const QueueMemory& memory) {
  const QueueView view = ViewOf(&memory);
  const QueueLayout& layout = memory.layout();
  std::string problems;
  std::vector<int> places(view.num_messages(), 0);
  const uint64_t next = NextIndexOf(view);
  const uint32_t queue_size = layout.queue_size;
  for (uint32_t position = 0; position < queue_size; ++position) {
    const uint64_t entry = view.entry(position).load(std::memory_order_acquire);
    const uint32_t message = Entry::Message(entry);
    // The newest index below `next` at this position.
    const uint64_t expected =
        next > position
            ? position + (next - 1 - position) / queue_size * queue_size
            : uint64_t{position} - queue_size;
    if (!Entry::Holds(entry, expected)) {
      aos::StrAppend(&problems, "position ", position, " holds index tag ",
                     Entry::Tag(entry), ", expected index ", expected, "\n");
    }
    if (message >= view.num_messages()) {
      aos::StrAppend(&problems, "position ", position, " holds message ",
                     message, " of ", view.num_messages(), "\n");
      continue;
    }
    ++places[message];
    if (next > position && view.message_header(message).queue_index.load(
                               std::memory_order_relaxed) != expected) {
      aos::StrAppend(&problems, "message ", message, " at position ", position,
                     " says index ",
                     view.message_header(message).queue_index.load(
                         std::memory_order_relaxed),
                     ", expected ", expected, "\n");
    }
    if (!RedzonesIntact(view, message)) {
      aos::StrAppend(&problems, "message ", message,
                     " in the ring has a "
                     "damaged redzone\n");
    }
  }
  for (uint32_t slot = 0; slot < layout.num_senders; ++slot) {
    const SenderSlot& sender = view.sender(slot);
    uint64_t state = sender.state.load(std::memory_order_acquire);
    const uint64_t owner = sender.owner.load(std::memory_order_acquire);
    if (SenderState::Pending(state)) {
      if (owner != 0 && !OwnerDied(owner)) {
        aos::StrAppend(&problems, "sender slot ", slot,
                       " has a publish pending and a live owner\n");
      }
      state = RepairedState(view, slot, state);
    }
    const uint32_t scratch = SenderState::Scratch(state);
    if (scratch >= view.num_messages()) {
      aos::StrAppend(&problems, "sender slot ", slot, " holds message ",
                     scratch, "\n");
      continue;
    }
    ++places[scratch];
  }
  for (uint32_t message = 0; message < view.num_messages(); ++message) {
    if (places[message] != 1) {
      aos::StrAppend(&problems, "message ", message, " is in ", places[message],
                     " places\n");
    }
  }
  return problems;
}

}  // namespace internal

}  // namespace aos::ipc_lib
