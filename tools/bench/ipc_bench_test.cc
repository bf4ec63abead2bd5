// ipc_bench names a bad flag in one line before it starts anything.
#include <algorithm>

#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::HasSubstr;

TEST(IpcBenchTest, BadFlagsAreNamedBeforeAnythingRuns) {
  const std::string dir = testing::TestTempDir();
  for (const auto& [flag, named] :
       std::vector<std::pair<std::string, std::string>>{
           {"--priority=120", "--priority=120 is not a SCHED_FIFO priority"},
           {"--runs=3", "--runs=3 is odd"},
           {"--payloads=32,x", "--payloads=32,x: 'x' is not a size"},
           {"--payloads=8", "--payloads=8: '8' is not a size of 16-65536"},
           {"--count=0", "--count=0"},
           {"--work_dir=" + dir + "/none", "is not a directory"}}) {
    std::vector<std::string> args = {"--work_dir=" + dir, flag,
                                     "--bin_dir=" + dir};
    Subprocess bench(testing::ArtifactPath("tools/bench/ipc_bench"), args, dir);
    EXPECT_EQ(bench.Wait(), 1) << flag;
    const std::string err = bench.Stderr();
    EXPECT_THAT(err, HasSubstr(named)) << flag;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1)
        << flag << ": " << err;
    EXPECT_EQ(bench.Stdout(), "") << flag;
  }
}

TEST(IpcBenchTest, MissingProgramsAreNamed) {
  const std::string dir = testing::TestTempDir();
  Subprocess bench(testing::ArtifactPath("tools/bench/ipc_bench"),
                   {"--work_dir=" + dir, "--bin_dir=" + dir}, dir);
  EXPECT_EQ(bench.Wait(), 1);
  EXPECT_THAT(bench.Stderr(), HasSubstr(dir + "/tools/bench/aos_pingpong"));
  EXPECT_EQ(bench.Stdout(), "");
}

}  // namespace
}  // namespace aos::bench
