#include "aos/util/cpu_latency_limit.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "aos/testing/path.h"
#include "aos/testing/processes.h"
#include "aos/util/cpu_set.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::aos::testing::HasOpenFile;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, std::string_view text) {
  std::ofstream(path) << text;
}

cpu_set_t Cpus(std::string_view list) {
  auto cpus = ParseCpuList(list);
  CHECK(cpus.ok());
  return *cpus;
}

// A fake /dev/cpu_dma_latency and a fake sysfs with CPUs 0-3, each without a
// limit ("0", as the kernel shows it).
class CpuLatencyLimitTest : public ::testing::Test {
 protected:
  CpuLatencyLimitTest() : dir_(testing::TestTempDir()) {
    paths_.cpu_dma_latency = dir_ + "/cpu_dma_latency";
    paths_.sysfs_cpus = dir_ + "/cpu";
    paths_.lock_dir = dir_ + "/locks";
    Write(paths_.cpu_dma_latency, "");
    for (int cpu = 0; cpu < 4; ++cpu) {
      std::filesystem::create_directories(CpuDir(cpu));
      Write(Value(cpu), "0\n");
    }
  }

  std::string CpuDir(int cpu) const {
    return dir_ + "/cpu/cpu" + std::to_string(cpu) + "/power";
  }
  std::string Value(int cpu) const {
    return CpuDir(cpu) + "/pm_qos_resume_latency_us";
  }

  std::string dir_;
  CpuLatencyLimit::Paths paths_;
};

TEST_F(CpuLatencyLimitTest, AllCpusWritesTheLimitAndHoldsTheFileOpen) {
  {
    auto limit = CpuLatencyLimit::HoldForAllCpus(7, paths_);
    ASSERT_TRUE(limit.ok()) << limit.status().message();
    const std::string written = Read(paths_.cpu_dma_latency);
    ASSERT_EQ(written.size(), sizeof(int32_t));
    int32_t value;
    memcpy(&value, written.data(), sizeof(value));
    EXPECT_EQ(value, 7);
    EXPECT_TRUE(HasOpenFile(getpid(), paths_.cpu_dma_latency));
    EXPECT_EQ((*limit)->cpus(), "all");
    EXPECT_EQ((*limit)->limit_us(), 7);
    EXPECT_EQ((*limit)->ToString(), "7 us on all CPUs (/dev/cpu_dma_latency)");
  }
  // The kernel drops the request when the file closes.
  EXPECT_FALSE(HasOpenFile(getpid(), paths_.cpu_dma_latency));
}

TEST_F(CpuLatencyLimitTest, ErrorsNameTheFile) {
  paths_.cpu_dma_latency = dir_ + "/missing";
  EXPECT_THAT(
      std::string(
          CpuLatencyLimit::HoldForAllCpus(0, paths_).status().message()),
      AllOf(HasSubstr(dir_ + "/missing"), HasSubstr("No such file")));
  const auto per_cpu = CpuLatencyLimit::HoldForCpus(0, Cpus("5"), paths_);
  EXPECT_THAT(std::string(per_cpu.status().message()),
              HasSubstr(dir_ + "/cpu/cpu5/power/pm_qos_resume_latency_us"));
  for (int32_t bad : {-1, CpuLatencyLimit::kMaxLimitUs + 1}) {
    EXPECT_THAT(
        std::string(
            CpuLatencyLimit::HoldForAllCpus(bad, paths_).status().message()),
        HasSubstr("is outside 0..1000000"));
  }
}

TEST_F(CpuLatencyLimitTest, PerCpuLimitsOnlyItsCpusAndRestoresThem) {
  {
    auto limit = CpuLatencyLimit::HoldForCpus(0, Cpus("1-2"), paths_);
    ASSERT_TRUE(limit.ok()) << limit.status().message();
    EXPECT_EQ((*limit)->cpus(), "1-2");
    EXPECT_EQ((*limit)->ToString(),
              "0 us on CPUs 1-2 (pm_qos_resume_latency_us)");
    // "n/a" is the kernel's word for a limit of 0 us.
    EXPECT_EQ(Read(Value(0)), "0\n");
    EXPECT_EQ(Read(Value(1)), "n/a");
    EXPECT_EQ(Read(Value(2)), "n/a");
    EXPECT_EQ(Read(Value(3)), "0\n");
  }
  EXPECT_EQ(Read(Value(1)), "0");
  EXPECT_EQ(Read(Value(2)), "0");
  auto limit = CpuLatencyLimit::HoldForCpus(25, Cpus("3"), paths_);
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(Read(Value(3)), "25");
}

TEST_F(CpuLatencyLimitTest, StricterLimitsWinAndTheLastHolderRestores) {
  Write(Value(1), "40\n");  // An administrator's own limit.
  auto loose = CpuLatencyLimit::HoldForCpus(100, Cpus("1"), paths_);
  ASSERT_TRUE(loose.ok());
  EXPECT_EQ(Read(Value(1)), "40\n");  // Never relaxed.
  auto strict = CpuLatencyLimit::HoldForCpus(0, Cpus("1"), paths_);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(Read(Value(1)), "n/a");
  auto middle = CpuLatencyLimit::HoldForCpus(20, Cpus("1"), paths_);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(Read(Value(1)), "n/a");
  strict->reset();
  loose->reset();
  // A holder remains: the strictest limit stays.
  EXPECT_EQ(Read(Value(1)), "n/a");
  middle->reset();
  EXPECT_EQ(Read(Value(1)), "40");
}

TEST_F(CpuLatencyLimitTest, AKilledHoldersLimitIsRestoredByTheNextHolder) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto limit = CpuLatencyLimit::HoldForCpus(0, Cpus("2"), paths_);
    if (!limit.ok()) _exit(1);
    raise(SIGKILL);
  }
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(Read(Value(2)), "n/a");  // Left behind by the dead holder.
  {
    auto limit = CpuLatencyLimit::HoldForCpus(10, Cpus("2"), paths_);
    ASSERT_TRUE(limit.ok());
  }
  // The value recorded before the dead holder, not the one it left.
  EXPECT_EQ(Read(Value(2)), "0");
}

TEST_F(CpuLatencyLimitTest, AFailedHoldChangesNothing) {
  std::filesystem::remove(Value(3));
  const auto limit = CpuLatencyLimit::HoldForCpus(0, Cpus("1-3"), paths_);
  EXPECT_THAT(std::string(limit.status().message()), HasSubstr(Value(3)));
  EXPECT_EQ(Read(Value(1)), "0");
  EXPECT_EQ(Read(Value(2)), "0");
  EXPECT_FALSE(CpuLatencyLimit::PerCpuAvailable(Cpus("1-3"), paths_));
  EXPECT_TRUE(CpuLatencyLimit::PerCpuAvailable(Cpus("0-2"), paths_));
}

}  // namespace
}  // namespace aos
