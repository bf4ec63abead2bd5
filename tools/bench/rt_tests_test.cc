#include "tools/bench/rt_tests.h"

#include <unistd.h>

#include <cmath>

#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::HasSubstr;

// Figures from one of the --json files in testdata/, written by rt-tests
// 2.40 on the build VM (their command lines are inside).
absl::StatusOr<Figures> FromTestdata(std::string_view file) {
  auto json = JsonDocument::ReadFile(
      testing::ArtifactPath(StrCat("tools/bench/testdata/", file)));
  CHECK(json.ok()) << json.status().message();
  return FiguresFromRtTestsJson(std::string(file), json->root());
}

TEST(FiguresFromRtTestsJsonTest, ReadsCyclictestsClassesAtTheirMiddle) {
  // cyclictest --mlockall -p80 -i1000 -l100 --histogram=2000 -q
  auto f = FromTestdata("cyclictest.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 100);
  EXPECT_EQ(f->overflows, 0u);
  EXPECT_EQ(f->bins.size(), 21u);
  EXPECT_EQ(f->bins.begin()->first, 25);
  EXPECT_EQ(f->bins.rbegin()->first, 131);
  EXPECT_EQ(f->min_us, 25);
  EXPECT_EQ(f->max_us, 131);
  // The file's 40.28 is the average of samples truncated to whole us.
  EXPECT_DOUBLE_EQ(f->avg_us, 40.78);
  double middles = 0;
  for (const auto& [bin, count] : f->bins) middles += (bin + 0.5) * count;
  EXPECT_NEAR(f->avg_us, middles / 100, 0.005)
      << "the raised average is the average of the classes' middles";
  EXPECT_EQ(f->p50_us, 40.5);
  EXPECT_EQ(f->p99_us, 64.5);
  EXPECT_EQ(f->p999_us, 131.5);
}

TEST(FiguresFromRtTestsJsonTest, CyclictestsOverflowsAreCyclesMinusItsClasses) {
  // cyclictest --mlockall -p80 -i1000 -l100 --histogram=60 -q: one sample
  // of 87 us fell beyond the last class.
  auto f = FromTestdata("cyclictest_overflow.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 100);
  EXPECT_EQ(f->overflows, 1u);
  EXPECT_DOUBLE_EQ(f->avg_us, 36.63 + 0.5);
  EXPECT_EQ(f->p99_us, 51.5);
  EXPECT_EQ(f->p999_us, 87) << "in the overflow only the max is known";
}

TEST(FiguresFromRtTestsJsonTest, CyclictestsThreadsArePooled) {
  // cyclictest --mlockall -p80 -i1000 -l20 --threads=3 --aligned=0
  // --histogram=2000 -q: three threads of 20 cycles.
  auto f = FromTestdata("cyclictest_threads.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 60);
  EXPECT_EQ(f->overflows, 0u);
  EXPECT_EQ(f->min_us, 6) << "thread 2's";
  EXPECT_EQ(f->max_us, 41) << "thread 0's";
  // The threads' averages (23.25, 23.5, 14.75) weighted by their cycles,
  // each raised by 0.5 us.
  EXPECT_DOUBLE_EQ(f->avg_us, (23.25 + 23.5 + 14.75) / 3 + 0.5);
  uint64_t pooled = 0;
  for (const auto& [bin, count] : f->bins) pooled += count;
  EXPECT_EQ(pooled, 60u) << "every thread's classes";
}

TEST(FiguresFromRtTestsJsonTest, AnEmptyHistogramIsAllOverflow) {
  // cyclictest -p80 -i1000 -l20 --histogram=3 -q: "histogram": {}.
  auto f = FromTestdata("cyclictest_all_overflow.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 20);
  EXPECT_EQ(f->overflows, 20u);
  EXPECT_TRUE(f->bins.empty());
  EXPECT_EQ(f->p50_us, 98);
}

TEST(FiguresFromRtTestsJsonTest, ReadsTheReceiversFiguresToAHundredth) {
  // sigwaittest -f -p80 -i1000 -l100 -q
  auto sigwait = FromTestdata("sigwaittest.json");
  ASSERT_TRUE(sigwait.ok()) << sigwait.status().message();
  EXPECT_EQ(sigwait->name, "sigwaittest.json");
  EXPECT_EQ(sigwait->count, 100);
  EXPECT_EQ(sigwait->min_us, 13);
  EXPECT_DOUBLE_EQ(sigwait->avg_us, 27.6);
  EXPECT_EQ(sigwait->max_us, 99);
  EXPECT_TRUE(std::isnan(sigwait->p99_us)) << "no classes, no percentiles";
  EXPECT_TRUE(sigwait->bins.empty());
  // ptsematest -p80 -i1000 -l100 -q
  auto ptsem = FromTestdata("ptsematest.json");
  ASSERT_TRUE(ptsem.ok()) << ptsem.status().message();
  EXPECT_EQ(ptsem->count, 100);
  EXPECT_DOUBLE_EQ(ptsem->avg_us, 20.57);
}

TEST(FiguresFromRtTestsJsonTest, WhatIsMissingIsNamed) {
  auto failed = JsonDocument::Parse(R"({ "return_code": 1 })", "failed.json");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(
      FiguresFromRtTestsJson("ptsematest", failed->root()).status().message(),
      "failed.json: thread is missing");
  auto odd =
      JsonDocument::Parse(R"({ "thread": { "0": { "cpu": 1 } } })", "odd.json");
  ASSERT_TRUE(odd.ok());
  EXPECT_THAT(FiguresFromRtTestsJson("x", odd->root()).status().message(),
              HasSubstr("odd.json: thread.0 holds neither a receiver"));
  auto no_samples = JsonDocument::Parse(
      R"({ "thread": { "0": { "receiver": { "min": 1, "avg": 2, "max": 3 },
                               "sender": {} } } })",
      "no_samples.json");
  ASSERT_TRUE(no_samples.ok());
  EXPECT_EQ(FiguresFromRtTestsJson("x", no_samples->root()).status().message(),
            "no_samples.json: thread.0.sender.samples is missing");
}

// The runner, with the real tools at normal priority (no root needed).
class RunRtTestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"cyclictest", "sigwaittest"}) {
      if (access(RtTestsTool(tool).c_str(), X_OK) != 0) {
        GTEST_SKIP() << RtTestsTool(tool)
                     << " is not installed (Debian package rt-tests; "
                        "tools/aos.sh install installs it)";
      }
    }
  }
  std::string work_dir_ = testing::TestTempDir();
};

TEST_F(RunRtTestTest, RunsAnyToolAndReadsItsJsonFile) {
  auto cyclictest = RunRtTest(
      "cyclictest", {"-i1000", "-l20", "--histogram=100000", "-q"}, work_dir_);
  ASSERT_TRUE(cyclictest.ok()) << cyclictest.status().message();
  EXPECT_EQ(cyclictest->name, "cyclictest");
  EXPECT_EQ(cyclictest->count, 20);
  EXPECT_LE(cyclictest->min_us, cyclictest->max_us);
  auto sigwait =
      RunRtTest("sigwaittest", {"-f", "-i1000", "-l20", "-q"}, work_dir_);
  ASSERT_TRUE(sigwait.ok()) << sigwait.status().message();
  EXPECT_EQ(sigwait->count, 20);
}

TEST_F(RunRtTestTest, ARunIsReadWhenFinished) {
  RtTestRun run("cyclictest",
                {"-i1000", "-l20", "--threads=2", "--histogram=100000", "-q"},
                work_dir_);
  EXPECT_GT(run.pid(), 0);
  auto f = run.Finish();
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 40) << "both threads";
}

TEST_F(RunRtTestTest, AToolThatFailsIsAnErrorWithItsOutput) {
  auto f = RunRtTest("cyclictest", {"--no-such-option"}, work_dir_);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr(RtTestsTool("cyclictest")));
  EXPECT_THAT(f.status().message(), HasSubstr("wrote no --json file"));
  EXPECT_THAT(f.status().message(), HasSubstr("--no-such-option"))
      << "the tool's own complaint is passed on";
}

}  // namespace
}  // namespace aos::bench
