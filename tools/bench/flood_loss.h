#ifndef TOOLS_BENCH_FLOOD_LOSS_H_
#define TOOLS_BENCH_FLOOD_LOSS_H_

// Where bridge_bench's flood (bridge_flood on pi1, through both bridges, to
// pi2) lost messages, and how long a stall the channel's declared rate
// leaves room for. A forwarded message can be lost in three places:
//   * on pi1: the bridge never read it, because the channel lapped it (its
//     loop fell more than the channel's queue behind the flood);
//   * in DDS: pi1's bridge read it but the write failed, or the reliable
//     writer's history (KEEP_LAST, as deep as the queue) dropped it before
//     the reader had it;
//   * on pi2: the channel refused the bridge's re-send, which came faster
//     than the channel's frequency allows (more than its queue within its
//     storage duration), as a catch-up after a stall does. On a reliable
//     channel such as /bench the bridge holds and paces such a re-send
//     (ClientStatistics paced_packets, not a loss), and drops only one
//     already later than the channel's storage duration.

#include <cmath>
#include <cstdint>
#include <string>

#include "aos/events/timing_histogram.h"

namespace aos::bench {

struct FloodLoss {
  int64_t unread_on_pi1 = 0;
  int64_t in_dds = 0;
  int64_t refused_on_pi2 = 0;
};

// Splits a flood's loss by where it happened, from what the flood sent,
// what pi1's bridge wrote to DDS (its ServerStatistics sent_packets) and
// how many of its writes failed, `lost` (pi2's ClientStatistics
// lost_packets: gaps in the source's queue indices, which count a refused
// re-send once a later message of its channel is re-sent) and what pi2's
// channel refused (its ClientStatistics dropped_send_failed). The parts on
// pi1 (sent - written - write failures) and on pi2 are as measured (never
// negative); DDS is the rest of `lost` (never negative either), so the
// parts may add up to a little more than `lost` where refusals at the
// flood's end were not counted there yet. `written` may include a few
// messages of other forwarded channels, so the part on pi1 may be short by
// those.
FloodLoss SplitFloodLoss(int64_t sent, int64_t written, int64_t write_failures,
                         int64_t lost, int64_t refused_on_pi2);

// What the goal line says about a flood besides its loss, in us (NaN:
// not measured, and left out of the text).
struct FloodDelays {
  // The longest one-way delay of a message forwarded during the flood.
  double longest_one_way_us = NAN;
  // CatchUpHeadroomSeconds and ReaderLagHeadroomSeconds, in us.
  double catch_up_headroom_us = NAN;
  double lag_headroom_us = NAN;
  // The most messages bridge_flood sent in one of its 1 ms ticks (0 or
  // less: not known).
  int64_t flood_largest_burst = 0;
};

// Where a flood's `loss` happened, for the goal line: "12094 unread on pi1
// (the channel lapped its bridge: more than 66.7 ms behind), 21 in DDS,
// 6000 refused on pi2 (a catch-up faster than the channel's rate: a stall
// over 16.7 ms; the longest delay was 23.4 ms; the flood sent up to 2458
// in one tick)"; the parts with none are left out, "" when nothing was
// lost.
std::string FloodLossText(const FloodLoss& loss, const FloodDelays& delays);

// The longest a channel's reader may fall behind, and a sender pause, before
// the channel (`frequency` messages a second, held `storage_s` seconds: a
// queue of frequency x storage_s) refuses or laps, at a steady `rate` below
// frequency:
//   * the stall after which a sender's catch-up (the backlog plus the
//     steady stream within one storage duration) exceeds the queue:
//     storage_s x (frequency - rate) / rate;
//   * the lag after which a reader has been lapped: the queue's messages at
//     `rate`, frequency x storage_s / rate.
// In seconds; NaN unless 0 < rate < frequency and storage_s > 0.
double CatchUpHeadroomSeconds(double frequency, double storage_s, double rate);
double ReaderLagHeadroomSeconds(double frequency, double storage_s,
                                double rate);

// The largest sample `after` holds that `before` (an earlier snapshot of the
// same cumulative histogram) did not, in ns: the exact maximum where it
// grew; else the highest bucket whose count grew, as its exclusive upper
// bound, or `after`'s maximum where that is lower. -1 where nothing was
// added.
int64_t LargestAddedNs(const timing::LatencyHistogram& before,
                       const timing::LatencyHistogram& after);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_FLOOD_LOSS_H_
