// latency_bench must refuse to measure without its baselines, saying which
// tools are missing and where they come from, before it starts anything.
#include <sys/stat.h>

#include <cstdio>

#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::HasSubstr;

TEST(LatencyBenchTest, MissingRtTestsAreNamedWithTheirPackage) {
  const std::string empty_dir = testing::TestTempDir();
  Subprocess bench(testing::ArtifactPath("tools/bench/latency_bench"),
                   {"--rt_tests_dir=" + empty_dir}, empty_dir);
  EXPECT_EQ(bench.Wait(), 1);
  const std::string err = bench.Stderr();
  for (const char* tool : {"cyclictest", "sigwaittest", "ptsematest"}) {
    EXPECT_THAT(err, HasSubstr(empty_dir + "/" + tool)) << err;
  }
  EXPECT_THAT(err, HasSubstr("rt-tests"));
  EXPECT_THAT(err, HasSubstr("tools/bench/latency.sh installs them"));
  EXPECT_EQ(bench.Stdout(), "") << "it measured nothing, so prints no table";
}

// A --bin_dir without what latency.sh builds: the first missing file named,
// exit 1, nothing measured (the rt-tests stand in as scripts that do
// nothing; gnuplot comes with the test command's packages).
TEST(LatencyBenchTest, AMissingBuiltProgramIsNamed) {
  const std::string dir = testing::TestTempDir();
  for (const char* tool : {"cyclictest", "sigwaittest", "ptsematest"}) {
    const std::string path = dir + "/" + tool;
    FILE* script = fopen(path.c_str(), "w");
    ASSERT_NE(script, nullptr) << path;
    fputs("#!/bin/sh\nexit 0\n", script);
    fclose(script);
    ASSERT_EQ(chmod(path.c_str(), 0755), 0) << path;
  }
  const std::string bin_dir = dir + "/nothing_built";
  Subprocess bench(testing::ArtifactPath("tools/bench/latency_bench"),
                   {"--rt_tests_dir=" + dir, "--bin_dir=" + bin_dir}, dir);
  EXPECT_EQ(bench.Wait(), 1);
  const std::string err = bench.Stderr();
  if (err.find("gnuplot") != std::string::npos) {
    GTEST_SKIP() << "gnuplot is not installed here (the test command "
                    "installs it): "
                 << err;
  }
  EXPECT_THAT(err, HasSubstr("--bin_dir=" + bin_dir + ": no " + bin_dir +
                             "/examples/ping"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("Check failed")));
  EXPECT_EQ(bench.Stdout(), "");
}

TEST(LatencyBenchTest, BadFlagsAreNamedBeforeAnythingRuns) {
  const std::string dir = testing::TestTempDir();
  for (const auto& [flag, named] :
       std::vector<std::pair<std::string, std::string>>{
           {"--interval_us=0", "--interval_us=0"},
           {"--interval_us=5000000", "--interval_us=5000000"},
           {"--priority=120", "--priority=120"},
           {"--priority=-1", "--priority=-1"},
           {"--scale_timers=1,0", "--scale_timers=1,0: '0' is not"},
           {"--scale_watchers=", "--scale_watchers= is empty"},
           {"--scale_seconds=-2", "--scale_seconds=-2"},
           {"--scale_p99_pairs=30", "--scale_p99_pairs=30 is not 0-20"}}) {
    Subprocess bench(testing::ArtifactPath("tools/bench/latency_bench"),
                     {flag, "--rt_tests_dir=" + dir}, dir);
    EXPECT_EQ(bench.Wait(), 1) << flag;
    EXPECT_THAT(bench.Stderr(), HasSubstr(named)) << flag;
    EXPECT_THAT(bench.Stderr(), ::testing::Not(HasSubstr("missing")))
        << flag << ": the flag is checked first";
    EXPECT_EQ(bench.Stdout(), "") << flag;
  }
}

TEST(LatencyBenchTest, SectionsThatContradictEachOtherAreRefused) {
  const std::string dir = testing::TestTempDir();
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--scale_only", "--main_job_only"},
           {"--scale_only", "--noscale"}}) {
    std::vector<std::string> args = flags;
    args.push_back("--rt_tests_dir=" + dir);
    Subprocess bench(testing::ArtifactPath("tools/bench/latency_bench"), args,
                     dir);
    EXPECT_EQ(bench.Wait(), 1) << flags[1];
    EXPECT_THAT(bench.Stderr(), HasSubstr("--scale_only=true cannot go with"))
        << flags[1];
    EXPECT_EQ(bench.Stdout(), "");
  }
}

}  // namespace
}  // namespace aos::bench
