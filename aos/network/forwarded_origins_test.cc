#include "aos/network/forwarded_origins.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

constexpr int64_t kMs = 1'000'000;

// The peer's clock is 5 s ahead of ours, known to within 30 us.
constexpr ClockOffsetEstimator::Estimate kAhead{
    .valid = true, .offset_ns = 5'000 * kMs, .uncertainty_ns = 30'000};
constexpr ClockOffsetEstimator::Estimate kNone{};

PathOrigins::Raw Raw(std::initializer_list<PathOrigin> origins,
                     uint32_t count = 0xffffffff, uint32_t dropped = 0) {
  PathOrigins::Raw raw{};
  uint32_t i = 0;
  for (const PathOrigin& origin : origins) raw.origins[i++] = origin;
  raw.count = count == 0xffffffff ? i : count;
  raw.dropped = dropped;
  return raw;
}

TEST(ForwardedOriginsTest, WireCarriesOriginsAsTheyAre) {
  PathOrigins origins;
  origins.Add(
      {.id = 7, .hops = 2, .uncertainty_us = 3, .monotonic_time_ns = 1234});
  origins.Add({.id = 9, .hops = 1, .monotonic_time_ns = 99});
  aos_bridge_Message message = {};
  message.origins[3].id = 55;  // Left over from another message.
  OriginsToWire(origins, &message);
  EXPECT_EQ(message.origin_count, 2u);
  EXPECT_EQ(message.origins_dropped, 0u);
  EXPECT_EQ(message.origins[3].id, 0u);
  const PathOrigins::Raw raw = OriginsFromWire(message);
  EXPECT_EQ(raw.count, 2u);
  EXPECT_EQ(
      raw.origins[0],
      (PathOrigin{
          .id = 7, .hops = 2, .uncertainty_us = 3, .monotonic_time_ns = 1234}));
  EXPECT_EQ(raw.origins[1],
            (PathOrigin{.id = 9, .hops = 1, .monotonic_time_ns = 99}));
  EXPECT_EQ(raw.origins[2], PathOrigin());
}

// Peer time t is t - offset of ours; the uncertainty is its own plus the
// estimate's, rounded up to us; hops are kept (forwarding is not a hop).
TEST(ForwardedOriginsTest, TranslatesIntoOurClockWithTheEstimatesSign) {
  const int64_t now = 100 * kMs;
  const ReceivedOrigins received = ReceiveOrigins(
      Raw({{.id = 1, .hops = 1, .monotonic_time_ns = 5'090 * kMs},
           {.id = 2,
            .hops = 3,
            .uncertainty_us = 200,
            .monotonic_time_ns = 5'050 * kMs}},
          2, 6),
      kAhead, now);
  EXPECT_EQ(received.invalid, 0u);
  EXPECT_EQ(received.without_offset, 0u);
  ASSERT_EQ(received.origins.size(), 2u);
  EXPECT_EQ(received.origins.dropped(), 6u);
  EXPECT_EQ(*received.origins.begin(),
            (PathOrigin{.id = 1,
                        .hops = 1,
                        .uncertainty_us = 30,
                        .monotonic_time_ns = 90 * kMs}));
  EXPECT_EQ(*(received.origins.begin() + 1),
            (PathOrigin{.id = 2,
                        .hops = 3,
                        .uncertainty_us = 200 + 30,
                        .monotonic_time_ns = 50 * kMs}));
}

// Before an estimate: no time is made up. What could be true is counted,
// what could not is counted as invalid; the sender's dropped count stays.
TEST(ForwardedOriginsTest, WithoutAnEstimateNoOriginCrosses) {
  const ReceivedOrigins received =
      ReceiveOrigins(Raw({{.id = 1, .hops = 1, .monotonic_time_ns = 5},
                          {.id = 2, .hops = 1, .monotonic_time_ns = 6},
                          {.id = 0, .hops = 1, .monotonic_time_ns = 7}},
                         3, 4),
                     kNone, 100);
  EXPECT_TRUE(received.origins.empty());
  EXPECT_EQ(received.origins.dropped(), 4u);
  EXPECT_EQ(received.without_offset, 2u);
  EXPECT_EQ(received.invalid, 1u);
}

// Network data is untrusted: each impossible origin is dropped and counted,
// the possible ones beside it kept.
TEST(ForwardedOriginsTest, ImpossibleOriginsAreDroppedAndCounted) {
  const int64_t now = 100 * kMs;
  const PathOrigin good{.id = 1, .hops = 1, .monotonic_time_ns = 5'090 * kMs};
  struct Case {
    const char* what;
    PathOrigins::Raw raw;
    uint32_t invalid;
    size_t kept;
  };
  const Case cases[] = {
      {"count 9", Raw({good, good, good, good}, 9), 4, 0},
      {"count 5", Raw({good}, 5), 4, 0},
      {"id 0", Raw({good, {.id = 0, .hops = 1, .monotonic_time_ns = 1}}), 1, 1},
      {"0 hops", Raw({good, {.id = 2, .hops = 0, .monotonic_time_ns = 1}}), 1,
       1},
      {"duplicate id",
       Raw({good, {.id = 1, .hops = 2, .monotonic_time_ns = 5'000 * kMs}}), 1,
       1},
      // 1 ms after now in our clock, with 30 us of uncertainty.
      {"future",
       Raw({good, {.id = 2, .hops = 1, .monotonic_time_ns = 5'101 * kMs}}), 1,
       1},
      // Within its own (claimed) uncertainty of now: possible.
      {"future within uncertainty",
       Raw({good,
            {.id = 2,
             .hops = 1,
             .uncertainty_us = 2000,
             .monotonic_time_ns = 5'101 * kMs}}),
       0, 2},
      {"far future",
       Raw({good, {.id = 2, .hops = 1, .monotonic_time_ns = INT64_MAX}}), 1, 1},
      {"far past",
       Raw({good,
            {.id = 2,
             .hops = 1,
             .uncertainty_us = UINT16_MAX,
             .monotonic_time_ns = INT64_MIN}}),
       1, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const ReceivedOrigins received = ReceiveOrigins(c.raw, kAhead, now);
    EXPECT_EQ(received.invalid, c.invalid);
    EXPECT_EQ(received.without_offset, 0u);
    EXPECT_EQ(received.origins.size(), c.kept);
    for (const PathOrigin& origin : received.origins) {
      EXPECT_LE(origin.monotonic_time_ns,
                now + int64_t{origin.uncertainty_us} * 1000);
    }
  }
}

// Offsets forged probes can make (clock_offset_estimator.h takes any that
// fits in int64) meet times that are anything: nothing overflows (the
// sanitizers' build would say), and no time crosses that is no clock's.
TEST(ForwardedOriginsTest, ExtremeOffsetsAndTimesNeverOverflow) {
  const int64_t times[] = {
      INT64_MIN,        INT64_MIN + 1, -(int64_t{1} << 62), -1, 0, 1,
      int64_t{1} << 62, INT64_MAX};
  const int64_t offsets[] = {INT64_MIN, INT64_MIN + 1,    -(int64_t{1} << 62),
                             0,         int64_t{1} << 62, INT64_MAX};
  for (const int64_t offset : offsets) {
    for (const int64_t time : times) {
      SCOPED_TRACE(testing::Message()
                   << "offset " << offset << " time " << time);
      const ReceivedOrigins received = ReceiveOrigins(
          Raw({{.id = 1,
                .hops = 1,
                .uncertainty_us = UINT16_MAX,
                .monotonic_time_ns = time}}),
          {.valid = true, .offset_ns = offset, .uncertainty_ns = INT64_MAX},
          INT64_MAX);
      EXPECT_EQ(received.invalid + received.origins.size(), 1u);
      for (const PathOrigin& origin : received.origins) {
        EXPECT_GE(origin.monotonic_time_ns, -(int64_t{1} << 62));
        EXPECT_LE(origin.monotonic_time_ns, int64_t{1} << 62);
        EXPECT_EQ(origin.uncertainty_us, UINT16_MAX);
      }
    }
  }
}

}  // namespace
}  // namespace aos::message_bridge
