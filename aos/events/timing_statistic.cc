#include "aos/events/timing_statistic.h"

namespace aos::timing {

void RunningStatistic::Merge(const RunningStatistic& other) noexcept {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  const double n_a = static_cast<double>(count_);
  const double n_b = static_cast<double>(other.count_);
  const double n = n_a + n_b;
  const double delta = other.mean_ - mean_;
  mean_ += delta * (n_b / n);
  m2_ += other.m2_ + delta * delta * (n_a * n_b / n);
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

flatbuffers::Offset<aos::timing::Statistic> RunningStatistic::Encode(
    flatbuffers::FlatBufferBuilder* fbb) const {
  using aos::timing::Statistic;
  const flatbuffers::uoffset_t start = fbb->StartTable();
  // The two-argument AddElement stores the value even when it equals the
  // schema default (NaN); flatbuffers may otherwise leave NaN out.
  fbb->AddElement<float>(Statistic::VT_STANDARD_DEVIATION,
                         static_cast<float>(standard_deviation()));
  fbb->AddElement<float>(Statistic::VT_MAX, static_cast<float>(max()));
  fbb->AddElement<float>(Statistic::VT_MIN, static_cast<float>(min()));
  fbb->AddElement<float>(Statistic::VT_AVERAGE, static_cast<float>(average()));
  return flatbuffers::Offset<Statistic>(fbb->EndTable(start));
}

RunningStatistic RunningStatistic::Decode(const aos::timing::Statistic& encoded,
                                          uint64_t count) noexcept {
  RunningStatistic result;
  if (count == 0) return result;
  const double standard_deviation = encoded.standard_deviation();
  result.count_ = count;
  result.mean_ = encoded.average();
  result.m2_ =
      standard_deviation * standard_deviation * static_cast<double>(count - 1);
  result.min_ = encoded.min();
  result.max_ = encoded.max();
  return result;
}

}  // namespace aos::timing
