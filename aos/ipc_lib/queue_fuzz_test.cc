// The fuzzing step of queue_fuzz.h, in the normal build: the checked-in
// corpus (inputs the fuzzer found interesting, tools/fuzz/queue_fuzz.sh),
// then thousands of deterministic random inputs aimed at every kind of field.
// A crash, a hang (the test's timeout) or a failed CHECK is a bug.

#include "aos/ipc_lib/queue_fuzz.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <vector>

#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/testing/path.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

DEFINE_int32(fuzz_iterations, 4000,
             "Deterministic random inputs RandomInputsNeverCrashOrHang runs.");

namespace aos::ipc_lib::testing {
namespace {

// Where a damage record is likeliest to matter: the start of every field.
std::vector<uint32_t> FieldOffsets(const QueueLayout& layout) {
  const internal::MemoryMap map = internal::MemoryMap::For(layout);
  std::vector<uint32_t> offsets;
  const auto add = [&offsets](size_t offset) {
    offsets.push_back(static_cast<uint32_t>(offset));
  };
  for (size_t offset = 0; offset < sizeof(internal::QueueHeader); offset += 4) {
    add(offset);
  }
  for (uint32_t i = 0; i < layout.queue_size; ++i) add(map.entries + 8 * i);
  for (uint32_t i = 0; i < layout.num_senders; ++i) {
    for (size_t field = 0; field < 32; field += 4) {
      add(map.senders + sizeof(internal::SenderSlot) * i + field);
    }
  }
  for (uint32_t i = 0; i < layout.num_watchers; ++i) {
    for (size_t field = 0; field < 32; field += 4) {
      add(map.watchers + sizeof(internal::WatcherSlot) * i + field);
    }
  }
  for (uint32_t m = 0; m < map.num_messages; ++m) {
    for (size_t field = 0; field < sizeof(internal::MessageHeader);
         field += 4) {
      add(map.messages + map.message_stride * m + field);
    }
    add(map.messages + map.message_stride * m +
        sizeof(internal::MessageHeader));
  }
  return offsets;
}

std::vector<uint8_t> RandomInput(std::mt19937_64& random,
                                 const std::vector<uint32_t>& fields,
                                 uint32_t queue_bytes) {
  std::vector<uint8_t> input;
  const auto word = [&input](uint32_t value) {
    for (int i = 0; i < 4; ++i)
      input.push_back(static_cast<uint8_t>(value >> (8 * i)));
  };
  uint8_t flags = static_cast<uint8_t>(random());
  if (random() % 8 != 0) flags &= 0x3f;  // Resize one time in eight.
  input.push_back(flags);
  word(static_cast<uint32_t>(random()));
  const int records = 1 + static_cast<int>(random() % 6);
  static constexpr uint64_t kValues[] = {
      0,         ~uint64_t{0},      internal::kOwnerDied, 1,
      0xfffff,   uint64_t{1} << 63, 0x80000000,           0x4000000000000000ull,
      0x7fffffff};
  for (int r = 0; r < records; ++r) {
    word(random() % 2 ? fields[random() % fields.size()]
                      : static_cast<uint32_t>(random() % queue_bytes));
    const int kind = static_cast<int>(random() % 3);
    const uint64_t value = kind == 0   ? kValues[random() % std::size(kValues)]
                           : kind == 1 ? random() % 16
                                       : random();
    const int count = std::array<int, 5>{1, 2, 4, 8, 8}[random() % 5];
    input.push_back(static_cast<uint8_t>(count));
    for (int i = 0; i < count; ++i) {
      input.push_back(static_cast<uint8_t>(value >> (8 * (i % 8))));
    }
  }
  return input;
}

class QueueFuzzTest : public ::testing::Test {
 protected:
  QueueFuzzTest() {
    // The queue logs every first damaged message of each reader: thousands.
    FLAGS_minloglevel = 3;
  }
  ~QueueFuzzTest() override { FLAGS_minloglevel = 0; }

  static void Print(const char* what, int runs, const FuzzStats& stats) {
    std::cout << what << ": " << runs << " inputs; reads good "
              << stats.good_reads << ", corrupt " << stats.corrupt_reads
              << "; corrupt sends " << stats.corrupt_sends << "; refused opens "
              << stats.refused_opens << ", refused senders "
              << stats.refused_senders << "\n";
  }

  std::string dir_ = aos::testing::TestTempDir();
};

TEST_F(QueueFuzzTest, CheckedInCorpusNeverCrashesOrHangs) {
  const std::filesystem::path corpus =
      aos::testing::ArtifactPath("aos/ipc_lib/testdata/queue_fuzz_corpus");
  ASSERT_TRUE(std::filesystem::is_directory(corpus)) << corpus;
  FuzzStats total;
  int runs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<uint8_t> input((std::istreambuf_iterator<char>(file)),
                                     std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    total += RunQueueFuzzInput(input.data(), input.size(), dir_);
    ++runs;
  }
  Print("corpus", runs, total);
  EXPECT_GE(runs, 10) << "the corpus is missing";
  EXPECT_GT(total.corrupt_reads, 0);
  EXPECT_GT(total.refused_opens, 0);
}

TEST_F(QueueFuzzTest, RandomInputsNeverCrashOrHang) {
  const QueueLayout layout = FuzzLayout();
  const std::vector<uint32_t> fields = FieldOffsets(layout);
  std::mt19937_64 random(971);
  FuzzStats total;
  for (int i = 0; i < FLAGS_fuzz_iterations; ++i) {
    const std::vector<uint8_t> input =
        RandomInput(random, fields, static_cast<uint32_t>(layout.MemorySize()));
    total += RunQueueFuzzInput(input.data(), input.size(), dir_);
  }
  Print("random", FLAGS_fuzz_iterations, total);
  // The damage reached every kind of outcome.
  EXPECT_GT(total.good_reads, 0);
  EXPECT_GT(total.corrupt_reads, 0);
  EXPECT_GT(total.corrupt_sends, 0);
  EXPECT_GT(total.refused_opens, 0);
  EXPECT_GT(total.refused_senders, 0);
}

}  // namespace
}  // namespace aos::ipc_lib::testing
