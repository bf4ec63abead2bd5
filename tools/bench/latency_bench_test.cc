// latency_bench must refuse to measure without its baselines, saying which
// tools are missing and where they come from, before it starts anything.
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

}  // namespace
}  // namespace aos::bench
