#ifndef AOS_IPC_LIB_QUEUE_FUZZ_H_
#define AOS_IPC_LIB_QUEUE_FUZZ_H_

// One fuzzing step against a queue file: build a queue, use it, damage it as
// `input` says, then open, read, send, register and wake on it, through the
// objects that were open before the damage and through new ones. Whatever
// the input, this must return: a crash, a hang, or an access outside the
// mapping (which faults on its guard pages, or is reported by
// AddressSanitizer) is a bug in the queue.
//
// Used by the libFuzzer binary (queue_fuzzer.cc, built with clang by
// tools/fuzz/queue_fuzz.sh) and by queue_fuzz_test, which runs a checked-in
// corpus and a few thousand deterministic random inputs with the normal
// build.
//
// Input, all optional (missing bytes read as zero):
//   byte 0     flags: bits 0-3 messages sent first; bit 4 a watcher is
//              registered first; bit 5 a second sender is made first;
//              bits 6-7 non-zero: resize the file, after the rest
//   bytes 1-4  the new file size (little-endian, modulo twice the queue's
//              size), then it is opened and used again
//   then       damage records: offset (4 bytes, little-endian, modulo the
//              queue's size), count (1 byte), count bytes written there
//              (clipped at the end of the queue)

#include <cstddef>
#include <cstdint>
#include <string>

#include "aos/ipc_lib/lockless_queue.h"

namespace aos::ipc_lib::testing {

// The layout every fuzzing step uses: small, so that random offsets land on
// every kind of field often.
QueueLayout FuzzLayout();

// What one step saw, so that a caller can tell it exercised something.
struct FuzzStats {
  int good_reads = 0;
  int corrupt_reads = 0;
  int corrupt_sends = 0;
  // Opens of the damaged (or resized) file that were refused.
  int refused_opens = 0;
  int refused_senders = 0;

  FuzzStats& operator+=(const FuzzStats& other);
};

// Runs one step in `directory` (which must exist; a file named
// "fuzz_queue" is made and deleted there). Checks what it can (a kGood read
// is within max_size, Wakeup signals at most num_watchers) with CHECK.
// Blocks WakeupSignal() in the calling thread and drains it.
FuzzStats RunQueueFuzzInput(const uint8_t* data, size_t size,
                            const std::string& directory);

}  // namespace aos::ipc_lib::testing

#endif  // AOS_IPC_LIB_QUEUE_FUZZ_H_
