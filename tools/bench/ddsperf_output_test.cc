#include "tools/bench/ddsperf_output.h"

#include "gtest/gtest.h"

namespace aos::bench {
namespace {

// Real ddsperf 0.10.2 output, shortened.
constexpr std::string_view kPing =
    "1795436698.231584 [77]    ddsperf: selected interface \"lo\" is not "
    "multicast-capable: disabling multicast\n"
    "[17618] participant vm:17618: new (self)\n"
    "[17618] 1.000  vm:17608 size 12 mean 52.551us min 11.220us 50% 48.209us "
    "90% 86.233us 99% 125.679us max 361.590us cnt 984\n"
    "[17618] 1.000  rss:7.3MB vcsw:2016 ivcsw:423 ddsperf:0%+7% recvUC:1%+0%\n"
    "[17618] 1.000  discarded 0 rexmit 0 Trexmit 0 Tthrottle 0 Nthrottle 0\n"
    "[17618] 2.000  vm:17608 size 12 mean 57.169us min 11.910us 50% 48.747us "
    "90% 85.316us 99% 137.347us max 1.420410ms cnt 16\n";

TEST(DdsperfOutputTest, PingPoolsTheSecondsWeightedByCount) {
  absl::StatusOr<Figures> f = ReadDdsperfPing(kPing, "ddsperf");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->name, "ddsperf");
  EXPECT_EQ(f->count, 1000);
  EXPECT_NEAR(f->p50_us, (48.209 * 984 + 48.747 * 16) / 1000, 1e-9);
  EXPECT_NEAR(f->p99_us, (125.679 * 984 + 137.347 * 16) / 1000, 1e-9);
  EXPECT_NEAR(f->avg_us, (52.551 * 984 + 57.169 * 16) / 1000, 1e-9);
  EXPECT_DOUBLE_EQ(f->min_us, 11.220);
  EXPECT_DOUBLE_EQ(f->max_us, 1420.410);
}

TEST(DdsperfOutputTest, PingWithoutLatencyLinesIsAnError) {
  absl::StatusOr<Figures> f =
      ReadDdsperfPing("[1] participant vm:1: new (self)\n", "ddsperf");
  EXPECT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("no latency line"), std::string::npos);
}

TEST(DdsperfOutputTest, PingLatencyLineWithoutFieldsIsNamed) {
  absl::StatusOr<Figures> f = ReadDdsperfPing(
      "[1] 1.000  vm:2 size 12 mean 5us min 1us 50% 4us cnt 3\n", "ddsperf");
  EXPECT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("mean 5us"), std::string::npos);
}

TEST(DdsperfOutputTest, SubRateLeavesOutTheFirstAndLastIntervals) {
  constexpr std::string_view kSub =
      "[17694] participant vm:17704: new\n"
      "[17694] 1.000  size 32 total 100 lost 0 delta 100 lost 0 rate 0.10 "
      "kS/s 73.26 Mb/s (28.62 kS/s 7.33 Mb/s)\n"
      "[17694] 1.000  rss:7.2MB vcsw:820 ivcsw:424 recvUC:34%+0%\n"
      "[17694] 2.000  size 32 total 1100 lost 0 delta 1000 lost 0 rate 1 "
      "kS/s\n"
      "[17694] 3.000  size 32 total 2100 lost 0 delta 1000 lost 0 rate 1 "
      "kS/s\n"
      "[17694] 4.000  size 32 total 3100 lost 2 delta 1000 lost 2 rate 1 "
      "kS/s\n"
      "[17694] 5.000  size 32 total 3200 lost 2 delta 100 lost 0 rate 0.1 "
      "kS/s\n"
      "[17694] 6.000  size 32 total 3200 lost 2 delta 0 lost 0 rate 0 kS/s\n";
  absl::StatusOr<DdsperfRate> rate = ReadDdsperfSub(kSub);
  ASSERT_TRUE(rate.ok()) << rate.status();
  EXPECT_DOUBLE_EQ(rate->per_s, 1000);
  EXPECT_EQ(rate->total, 3200);
  EXPECT_EQ(rate->lost, 2);
  EXPECT_EQ(rate->size_bytes, 32);
}

TEST(DdsperfOutputTest, SubThatReceivedNothingIsAnError) {
  EXPECT_FALSE(ReadDdsperfSub("[1] participant vm:1: new (self)\n").ok());
  EXPECT_FALSE(ReadDdsperfSub("[1] 1.000  size 32 total 0 lost 0 delta 0 "
                              "lost 0 rate 0 kS/s\n")
                   .ok());
}

}  // namespace
}  // namespace aos::bench
