#include "tools/netdelay/seeded_loss.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace aos::netdelay {
namespace {

int CountDrops(const SeededLoss& loss, uint64_t packets) {
  int drops = 0;
  for (uint64_t i = 0; i < packets; ++i) drops += loss.Drops(i) ? 1 : 0;
  return drops;
}

TEST(SeededLossTest, NoneAndAll) {
  EXPECT_EQ(CountDrops(SeededLoss(0, 1), 1000), 0);
  EXPECT_EQ(CountDrops(SeededLoss(100, 1), 1000), 1000);
}

// The same seed drops the same packets; another seed drops others.
TEST(SeededLossTest, DeterministicPerIndex) {
  const SeededLoss a(10, 7), b(10, 7), c(10, 8);
  int differences = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.Drops(i), b.Drops(i)) << "packet " << i;
    differences += a.Drops(i) != c.Drops(i) ? 1 : 0;
  }
  EXPECT_GT(differences, 0);
}

// About the asked share: 10% of 100000 is 10000 with a standard deviation
// of about 95; the seed is fixed, so this is exact every run.
TEST(SeededLossTest, AboutTheAskedShare) {
  const int drops = CountDrops(SeededLoss(10, 1), 100000);
  EXPECT_GT(drops, 9500);
  EXPECT_LT(drops, 10500);
}

// Pins the function tools/netdelay/udp_probe.py repeats: SplitMix64 of
// seed 1, 50% for packets 0..15, as that script computes it.
TEST(SeededLossTest, MatchesTheDocumentedFunction) {
  const SeededLoss loss(50, 1);
  std::string pattern;
  for (uint64_t i = 0; i < 16; ++i) pattern += loss.Drops(i) ? 'x' : '.';
  EXPECT_EQ(pattern, "...xx...x.x.x.xx");
}

}  // namespace
}  // namespace aos::netdelay
