#ifndef AOS_IPC_LIB_QUEUE_TEST_UTIL_H_
#define AOS_IPC_LIB_QUEUE_TEST_UTIL_H_

// Self-checking messages for the queue tests: each names its writer and
// sequence number and carries a checksum of all of it, so a reader can tell
// a whole message from a torn or misplaced one.
//
// clang-format off
//   const size_t length = TestMessageLength(sequence, sender->size());
//   WriteTestMessage(sender->Data(), sender->size(), writer, sequence, length);
//   ASSERT_EQ(sender->Send(length, ...), QueueSender::Result::kGood);
//   ...
//   ASSERT_EQ(reader.Read(index, &info, buffer), QueueReader::Result::kGood);
//   std::string error = CheckTestMessage(buffer, info.size, &decoded);
//   std::string problems = ValidateQueue(*memory);   // a quiet queue
// clang-format on

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/util/str_cat.h"

namespace aos::ipc_lib::testing {

struct TestMessageHeader {
  uint32_t writer;
  uint32_t sequence;
  uint32_t length;
  uint32_t reserved;
  uint64_t checksum;
};

inline uint8_t TestMessageByte(uint32_t writer, uint32_t sequence, size_t i) {
  return static_cast<uint8_t>(sequence * 131u + i * 7u + writer * 17u);
}

// Mixes 8 bytes at a time (fast enough for stress tests), then the tail.
inline uint64_t TestMessageChecksum(const TestMessageHeader& header,
                                    const uint8_t* body, size_t body_size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](uint64_t value) {
    hash = (hash ^ value) * 0x100000001b3ull;
    hash ^= hash >> 29;
  };
  mix(header.writer);
  mix(header.sequence);
  mix(header.length);
  size_t i = 0;
  for (; i + 8 <= body_size; i += 8) {
    uint64_t word;
    std::memcpy(&word, body + i, 8);
    mix(word);
  }
  for (; i < body_size; ++i) mix(body[i]);
  return hash;
}

// A length between the header and `capacity`, varying with the sequence.
inline size_t TestMessageLength(uint32_t sequence, size_t capacity) {
  const size_t minimum = sizeof(TestMessageHeader);
  if (capacity <= minimum) return minimum;
  return minimum + (sequence * 13u) % (capacity - minimum + 1);
}

// Writes the message as the last `length` bytes of `data[0, capacity)`, as a
// sender's buffer wants it.
inline void WriteTestMessage(void* data, size_t capacity, uint32_t writer,
                             uint32_t sequence, size_t length) {
  uint8_t* message = static_cast<uint8_t*>(data) + capacity - length;
  TestMessageHeader header{writer, sequence, static_cast<uint32_t>(length), 0,
                           0};
  uint8_t* body = message + sizeof(header);
  const size_t body_size = length - sizeof(header);
  for (size_t i = 0; i < body_size; ++i) {
    body[i] = TestMessageByte(writer, sequence, i);
  }
  header.checksum = TestMessageChecksum(header, body, body_size);
  std::memcpy(message, &header, sizeof(header));
}

// "" if `data[0, size)` is a whole test message (then *decoded describes
// it), else what is wrong.
inline std::string CheckTestMessage(const void* data, size_t size,
                                    TestMessageHeader* decoded) {
  if (size < sizeof(TestMessageHeader)) {
    return aos::StrCat("message of ", size, " bytes is too short");
  }
  TestMessageHeader header;
  std::memcpy(&header, data, sizeof(header));
  if (header.length != size) {
    return aos::StrCat("message says ", header.length, " bytes, is ", size);
  }
  const uint8_t* body = static_cast<const uint8_t*>(data) + sizeof(header);
  const size_t body_size = size - sizeof(header);
  if (TestMessageChecksum(header, body, body_size) != header.checksum) {
    return aos::StrCat("bad checksum in message ", header.sequence,
                       " of writer ", header.writer);
  }
  for (size_t i = 0; i < body_size; ++i) {
    if (body[i] != TestMessageByte(header.writer, header.sequence, i)) {
      return aos::StrCat("bad byte ", i, " in message ", header.sequence,
                         " of writer ", header.writer);
    }
  }
  if (decoded != nullptr) *decoded = header;
  return "";
}

// Runs `body` on a thread of its own and waits until the kernel no longer
// knows that thread (a joined thread's task may still take signals for a
// moment after join returns). Returns its tid, or -1 if it was still there
// after kHangLimit. For tests that need a registration whose thread is gone.
template <typename Body>
pid_t RunOnThreadThatIsThenGone(Body body) {
  pid_t tid = 0;
  std::thread([&] {
    tid = gettid();
    body();
  }).join();
  for (const HangGuard guard; !guard.Expired(); usleep(1000)) {
    if (tgkill(getpid(), tid, 0) != 0 && errno == ESRCH) return tid;
  }
  return -1;
}

// Writes and sends a test message through `sender`. Lengths vary up to
// `max_length` (default: the whole buffer).
inline QueueSender::Result SendTest(QueueSender* sender, uint32_t writer,
                                    uint32_t sequence, size_t max_length = 0) {
  const size_t length = TestMessageLength(
      sequence, max_length == 0 ? sender->size() : max_length);
  WriteTestMessage(sender->Data(), sender->size(), writer, sequence, length);
  MessageInfo sent;
  return sender->Send(length, MessageOrigin(), &sent);
}

// Reads every message still in the (quiet) queue: all must be there and
// whole, and each writer's sequence numbers must increase along the
// indices. Returns "" or what is wrong.
inline std::string ValidateQueue(const QueueMemory& memory) {
  QueueReader reader(const_cast<QueueMemory*>(&memory));
  const uint64_t next = reader.NextIndex();
  const uint64_t queue_size = memory.layout().queue_size;
  const uint64_t first = next > queue_size ? next - queue_size : 0;
  std::vector<char> buffer(memory.layout().message_data_size);
  std::map<uint32_t, uint32_t> last_sequence;
  for (uint64_t index = first; index < next; ++index) {
    MessageInfo info;
    const QueueReader::Result result = reader.Read(index, &info, buffer.data());
    if (result != QueueReader::Result::kGood) {
      return aos::StrCat("index ", index, " of [", first, ", ", next,
                         ") is unreadable: ", static_cast<int>(result));
    }
    if (info.queue_index != static_cast<uint32_t>(index)) {
      return aos::StrCat("index ", index, " says it is ", info.queue_index);
    }
    TestMessageHeader decoded;
    const std::string error =
        CheckTestMessage(buffer.data(), info.size, &decoded);
    if (!error.empty()) return aos::StrCat("index ", index, ": ", error);
    auto [it, inserted] =
        last_sequence.emplace(decoded.writer, decoded.sequence);
    if (!inserted) {
      if (decoded.sequence <= it->second) {
        return aos::StrCat("index ", index, ": writer ", decoded.writer,
                           " went from ", it->second, " to ", decoded.sequence);
      }
      it->second = decoded.sequence;
    }
  }
  return internal::CheckQueueInvariants(memory);
}

}  // namespace aos::ipc_lib::testing

#endif  // AOS_IPC_LIB_QUEUE_TEST_UTIL_H_
