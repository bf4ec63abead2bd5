#include "tools/netdelay/seeded_loss.h"

namespace aos::netdelay {

SeededLoss::SeededLoss(double percent, uint64_t seed)
    : fraction_(percent / 100.0), seed_(seed) {}

bool SeededLoss::Drops(uint64_t index) const {
  if (fraction_ <= 0) return false;
  if (fraction_ >= 1) return true;
  // SplitMix64's output for the (index + 1)-th step of a generator seeded
  // with seed_: well mixed even for consecutive indices and seeds.
  uint64_t z = seed_ + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double uniform = static_cast<double>(z >> 11) * 0x1.0p-53;
  return uniform < fraction_;
}

}  // namespace aos::netdelay
