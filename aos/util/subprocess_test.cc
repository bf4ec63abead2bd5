// CpuSecondsOf reads a process's CPU time from /proc/PID/stat past a
// command name with spaces and parentheses in it, and says 0 for a process
// that is gone; a Subprocess waited for keeps its status.
#include "aos/util/subprocess.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "aos/testing/wait_until.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

TEST(CpuSecondsOfTest, ReadsPastACommandNameWithSpacesAndParentheses) {
  char old_name[17] = {};
  ASSERT_EQ(prctl(PR_GET_NAME, old_name), 0);
  // /proc/PID/stat shows it as "(a) b c)": read from the first space, the
  // fields would be off by two.
  ASSERT_EQ(prctl(PR_SET_NAME, "a) b c"), 0);
  volatile uint64_t sink = 0;
  double cpu = 0;
  // Burns CPU until the kernel has counted some; the limit only ends a hang.
  EXPECT_TRUE(testing::WaitUntil(
      [&]() {
        for (uint64_t i = 0; i < 10000000; ++i) sink = sink + i;
        cpu = CpuSecondsOf(getpid());
        return cpu > 0;
      },
      std::chrono::seconds(60), "CPU time counted for this process"));
  rusage usage;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &usage), 0);
  // Read after it, and counted in finer steps: never less, give or take
  // one clock tick.
  EXPECT_LE(cpu, Seconds(usage.ru_utime) + Seconds(usage.ru_stime) +
                     1.0 / static_cast<double>(sysconf(_SC_CLK_TCK)));
  ASSERT_EQ(prctl(PR_SET_NAME, old_name), 0);
}

TEST(CpuSecondsOfTest, AProcessThatIsGoneUsedNone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(CpuSecondsOf(child), 0);
}

// (Not checked by signalling a sibling: on a regression, kill(-1, SIGTERM)
// from a test run as root would end every process on the machine.)
TEST(SubprocessTest, OnceWaitedForItKeepsItsStatus) {
  Subprocess shell("/bin/sh", {"-c", "exit 3"}, ::testing::TempDir());
  EXPECT_EQ(shell.Wait(), 3);
  EXPECT_EQ(shell.Terminate(), 3);
  EXPECT_EQ(shell.Wait(), 3);
  EXPECT_EQ(shell.pid(), -1);
}

}  // namespace
}  // namespace aos
