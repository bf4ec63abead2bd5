#include "aos/starter/process_usage.h"

#include <unistd.h>

#include <vector>

#include "gtest/gtest.h"

namespace aos::starter {
namespace {

TEST(ProcessUsageTest, ReadsThisProcess) {
  std::optional<ProcessUsage> before = ReadProcessUsage(getpid());
  ASSERT_TRUE(before.has_value());
  // Touch 64 MiB so that resident memory and CPU time both grow.
  std::vector<char> memory(64 << 20);
  for (size_t i = 0; i < memory.size(); i += 4096) memory[i] = 1;
  // CPU time counts in clock ticks (10 ms): work until one more shows.
  uint64_t sum = 0;
  std::optional<ProcessUsage> after;
  for (int round = 0; round < 10000; ++round) {
    for (size_t i = 0; i < memory.size(); i += 64) sum += memory[i];
    after = ReadProcessUsage(getpid());
    ASSERT_TRUE(after.has_value());
    if (after->cpu_time > before->cpu_time) break;
  }
  // Keeps the loop: its result is used.
  EXPECT_GT(sum, 0u);
  EXPECT_GE(after->resident_bytes, memory.size());
  EXPECT_GT(after->cpu_time, before->cpu_time);
  EXPECT_GT(CpuShare(*before, *after), 0);
  EXPECT_EQ(after->name.substr(0, 6), "proces");
}

TEST(ProcessUsageTest, AProcessThatIsGoneIsNothing) {
  // Pids are at most 2^22 on Linux.
  EXPECT_FALSE(ReadProcessUsage((1 << 22) + 1).has_value());
}

TEST(ProcessUsageTest, NoTimeBetweenSamplesIsNoShare) {
  ProcessUsage sample;
  sample.cpu_time = std::chrono::seconds(1);
  EXPECT_EQ(CpuShare(sample, sample), 0);
}

}  // namespace
}  // namespace aos::starter
