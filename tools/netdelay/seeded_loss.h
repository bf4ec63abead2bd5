#ifndef TOOLS_NETDELAY_SEEDED_LOSS_H_
#define TOOLS_NETDELAY_SEEDED_LOSS_H_

// Which packets an emulated lossy link drops: the decision for the i-th
// packet (counting from 0) is a pure function of (seed, i), so a run with a
// given seed drops exactly the same packets every time, and a test can work
// out beforehand which ones (tools/netdelay/udp_probe.py does the same sum).
//
//   SeededLoss loss(/*percent=*/10, /*seed=*/1);
//   if (loss.Drops(packet_index)) ...;  // about one packet in ten

#include <cstdint>

namespace aos::netdelay {

class SeededLoss {
 public:
  // `percent` in [0, 100]; 0 never drops, 100 always drops.
  SeededLoss(double percent, uint64_t seed);

  // True if the packet with this index is lost. Packet i is dropped when
  // SplitMix64(seed + (i + 1) * 0x9E3779B97F4A7C15), taken as a fraction of
  // 2^64 with 53 bits, is below percent / 100. Cheap; no state.
  bool Drops(uint64_t index) const;

 private:
  double fraction_;
  uint64_t seed_;
};

}  // namespace aos::netdelay

#endif  // TOOLS_NETDELAY_SEEDED_LOSS_H_
