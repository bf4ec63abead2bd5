#include "tools/bench/bench_harness.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

TEST(BenchHarnessTest, AbbaOrder) {
  std::string order;
  for (int run = 0; run < 8; ++run) order += AbbaSecondArm(run) ? 'B' : 'A';
  EXPECT_EQ(order, "ABBAABBA");
}

TEST(BenchHarnessTest, ProcessCpuSecondsIsAProcesssCpuClock) {
  const double before = ProcessCpuSeconds(getpid());
  ASSERT_FALSE(std::isnan(before));
  // Reading it costs CPU time, which the next reading shows: a CPU clock
  // (nanoseconds), not /proc's 10 ms ticks, which would stay put.
  double after = before;
  for (int i = 0; i < 1000000 && after == before; ++i) {
    after = ProcessCpuSeconds(getpid());
  }
  EXPECT_GT(after, before);
  EXPECT_LT(after - before, 0.005);
  // A process that is gone (reaped).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(std::isnan(ProcessCpuSeconds(child)));
}

TEST(BenchHarnessTest, Text) {
  EXPECT_EQ(ThreeDigits(4.371), "4.37");
  EXPECT_EQ(ThreeDigits(28.54), "28.5");
  EXPECT_EQ(ThreeDigits(102.4), "102");
  EXPECT_EQ(ThreeDigits(NAN), "-");
  EXPECT_EQ(Fixed(3.14159), "3.1");
  EXPECT_EQ(Fixed(3.14159, 3), "3.142");
  EXPECT_EQ(Fixed(NAN, 2), "-");
  EXPECT_EQ(RatioText(3, 2), "1.50x");
  EXPECT_EQ(RatioText(3, 0), "-");
  EXPECT_EQ(RatioText(NAN, 2), "-");
  EXPECT_EQ(SafeRatio(3, 2), 1.5);
  EXPECT_TRUE(std::isnan(SafeRatio(3, 0)));
  EXPECT_EQ(Mean({1, 2, 6}), 3);
  EXPECT_TRUE(std::isnan(Mean({})));
  EXPECT_EQ(MedianOfMeasured({5, 1, 3}), 3);
  EXPECT_EQ(MedianOfMeasured({4, 1, 3, 10}), 3.5);
  EXPECT_EQ(MedianOfMeasured({NAN, 2, NAN}), 2);
  EXPECT_TRUE(std::isnan(MedianOfMeasured({NAN})));
  EXPECT_TRUE(std::isnan(MedianOfMeasured({})));
}

TEST(BenchHarnessTest, FilesAndLines) {
  const std::string dir = testing::TestTempDir();
  const std::string file = dir + "/two_lines";
  std::ofstream(file) << "first\nsecond\n";
  EXPECT_EQ(ReadFirstLine(file), "first");
  EXPECT_EQ(ReadFirstLine(dir + "/none"), "");
  EXPECT_EQ(MissingFiles({file, dir + "/none"}),
            std::vector<std::string>{dir + "/none"});
  const MachineInfo machine = ReadMachineInfo();
  EXPECT_GT(machine.online_cpus, 0);
  EXPECT_FALSE(machine.kernel.empty());
}

TEST(BenchHarnessTest, ProgramsRunFromTheBuildTree) {
  const BenchPrograms programs("/bin", testing::TestTempDir());
  EXPECT_EQ(programs.Path("true"), "/bin/true");
  auto ok = programs.Start("true", {});
  ExitUnlessSucceeded(*ok, "true");
  EXPECT_EXIT(
      {
        auto failing = programs.Start("sh", {"-c", "echo said; exit 3"});
        ExitUnlessSucceeded(*failing, "sh");
      },
      ::testing::ExitedWithCode(1),
      "--- stdout\nsaid\n\n--- stderr\n\nbench_harness_test: sh exited 3\n$");
}

}  // namespace
}  // namespace aos::bench
