#include "aos/ipc_lib/queue_fuzz.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "aos/ipc_lib/queue_memory_internal.h"
#include "glog/logging.h"

namespace aos::ipc_lib::testing {
namespace {

constexpr std::string_view kChannel = "/fuzz aos.Fuzz";

// Reads the input front to back; bytes past its end read as zero.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return position_ >= size_; }
  uint8_t Byte() { return position_ < size_ ? data_[position_++] : 0; }
  uint32_t Word() {
    uint32_t word = 0;
    for (int i = 0; i < 4; ++i)
      word |= static_cast<uint32_t>(Byte()) << (8 * i);
    return word;
  }

 private:
  const uint8_t* const data_;
  const size_t size_;
  size_t position_ = 0;
};

void SendSome(QueueSender* sender, uint32_t writer, int count,
              FuzzStats* stats) {
  for (int i = 0; i < count; ++i) {
    const size_t length = std::min<size_t>(8 + i, sender->size());
    std::memset(static_cast<char*>(sender->Data()) + sender->size() - length,
                static_cast<int>(writer + i), length);
    MessageInfo sent;
    stats->corrupt_sends += sender->Send(length, MessageOrigin(), &sent) ==
                            QueueSender::Result::kCorrupt;
  }
}

// Reads around everything the queue might hold, whatever NextIndex() says.
void ReadAround(QueueMemory* memory, FuzzStats* stats) {
  const QueueReader reader(memory);
  const uint64_t next = reader.NextIndex();
  const uint64_t queue_size = memory->layout().queue_size;
  std::vector<char> buffer(memory->layout().message_data_size);
  const auto read = [&](uint64_t index) {
    MessageInfo info;
    switch (reader.Read(index, &info, buffer.data())) {
      case QueueReader::Result::kGood:
        CHECK_LE(info.size, memory->layout().message_data_size);
        ++stats->good_reads;
        break;
      case QueueReader::Result::kCorrupt:
        ++stats->corrupt_reads;
        break;
      case QueueReader::Result::kNothingNewYet:
      case QueueReader::Result::kTooOld:
        break;
    }
  };
  for (uint64_t i = 0; i < queue_size + 2; ++i) {
    read(next - queue_size - 1 + i);
    read(i);
  }
}

// Everything a program does with a queue, on whatever the file holds now.
void UseQueue(QueueMemory* memory, FuzzStats* stats) {
  ReadAround(memory, stats);
  auto sender = QueueSender::Make(memory);
  stats->refused_senders += !sender.ok();
  if (sender.ok()) SendSome(sender->get(), 3, 3, stats);
  auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), 2);
  const int woken = QueueWakeUpper(memory).Wakeup();
  CHECK_LE(woken, static_cast<int>(memory->layout().num_watchers));
  ReadAround(memory, stats);
}

void DrainWakeups(const sigset_t& wakeup) {
  const struct timespec zero = {0, 0};
  while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
  }
}

}  // namespace

FuzzStats& FuzzStats::operator+=(const FuzzStats& other) {
  good_reads += other.good_reads;
  corrupt_reads += other.corrupt_reads;
  corrupt_sends += other.corrupt_sends;
  refused_opens += other.refused_opens;
  refused_senders += other.refused_senders;
  return *this;
}

QueueLayout FuzzLayout() {
  QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = 4;
  layout.num_senders = 3;
  layout.num_watchers = 2;
  layout.channel_storage_duration_ns = 0;
  return layout;
}

FuzzStats RunQueueFuzzInput(const uint8_t* data, size_t size,
                            const std::string& directory) {
  FuzzStats stats;
  // Damaged files mostly have damaged initialisation markers: do not wait a
  // second for each.
  internal::SetInitialisationTimeoutForTesting(std::chrono::milliseconds(0));
  sigset_t wakeup;
  sigemptyset(&wakeup);
  sigaddset(&wakeup, WakeupSignal());
  pthread_sigmask(SIG_BLOCK, &wakeup, nullptr);

  const QueueLayout layout = FuzzLayout();
  const size_t queue_bytes = layout.MemorySize();
  const std::string path = directory + "/fuzz_queue";
  unlink(path.c_str());
  InputReader input(data, size);
  const uint8_t flags = input.Byte();
  const uint32_t new_size = input.Word();
  {
    auto opened = QueueMemory::Open(path, layout, 0600, kChannel);
    CHECK(opened.ok()) << opened.status();
    std::unique_ptr<QueueMemory> memory = std::move(opened).value();
    auto live = QueueSender::Make(memory.get());
    CHECK(live.ok()) << live.status();
    SendSome(live->get(), 1, flags & 0xf, &stats);
    std::unique_ptr<QueueWatcher> watcher;
    if (flags & 0x10) {
      watcher = std::move(
          QueueWatcher::Make(memory.get(), getpid(), gettid(), 7).value());
    }
    std::unique_ptr<QueueSender> second;
    if (flags & 0x20) {
      second = std::move(QueueSender::Make(memory.get()).value());
      SendSome(second.get(), 2, 1, &stats);
    }

    // The damage.
    char* const base = static_cast<char*>(memory->base());
    while (!input.done()) {
      const size_t offset = input.Word() % queue_bytes;
      const size_t count = input.Byte();
      for (size_t i = 0; i < count; ++i) {
        const uint8_t byte = input.Byte();
        if (offset + i < queue_bytes)
          base[offset + i] = static_cast<char>(byte);
      }
    }

    // What was open before goes on.
    ReadAround(memory.get(), &stats);
    SendSome(live->get(), 1, 2, &stats);
    if (second != nullptr) SendSome(second.get(), 2, 2, &stats);
    CHECK_LE(QueueWakeUpper(memory.get()).Wakeup(),
             static_cast<int>(layout.num_watchers));
    // And a newcomer opens it: refused by name, or usable.
    auto again = QueueMemory::Open(path, layout, 0600, kChannel);
    stats.refused_opens += !again.ok();
    if (again.ok()) UseQueue(again->get(), &stats);
    DrainWakeups(wakeup);
  }

  if ((flags >> 6) != 0) {
    const size_t bytes = new_size % (2 * queue_bytes);
    CHECK_EQ(truncate(path.c_str(), static_cast<off_t>(bytes)), 0);
    auto resized = QueueMemory::Open(path, layout, 0600, kChannel);
    stats.refused_opens += !resized.ok();
    if (resized.ok()) UseQueue(resized->get(), &stats);
    DrainWakeups(wakeup);
  }
  unlink(path.c_str());
  return stats;
}

}  // namespace aos::ipc_lib::testing
