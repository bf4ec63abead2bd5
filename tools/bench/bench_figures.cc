#include "tools/bench/bench_figures.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos::bench {

Figures FromHistogram(std::string name,
                      const timing::LatencyHistogram& histogram,
                      const timing::RunningStatistic& statistic) {
  Figures f;
  f.name = std::move(name);
  f.count = static_cast<int64_t>(histogram.count());
  if (f.count == 0) {
    f.count = static_cast<int64_t>(statistic.count());
    if (f.count == 0) return f;
    f.min_us = statistic.min() * 1e6;
    f.avg_us = statistic.average() * 1e6;
    f.max_us = statistic.max() * 1e6;
    return f;
  }
  f.min_us = histogram.min_ns() / 1e3;
  f.max_us = histogram.max_ns() / 1e3;
  f.avg_us = statistic.average() * 1e6;
  f.p50_us = histogram.PercentileNs(50) / 1e3;
  f.p99_us = histogram.PercentileNs(99) / 1e3;
  f.p999_us = histogram.PercentileNs(99.9) / 1e3;
  histogram.ForEachNonEmptyBucket([&](size_t, int64_t lower, int64_t upper,
                                      uint64_t count) {
    const int64_t first = lower / 1000;
    const int64_t last =
        std::max(first, (std::min(upper, histogram.max_ns() + 1) - 1) / 1000);
    const uint64_t width = static_cast<uint64_t>(last - first + 1);
    for (int64_t bin = first; bin <= last; ++bin) {
      f.bins[bin] +=
          count / width + (static_cast<uint64_t>(bin - first) < count % width);
    }
  });
  return f;
}

void FillPercentiles(Figures* f) {
  uint64_t total = f->overflows;
  double sum = 0;
  uint64_t in_range = 0;
  for (const auto& [bin, count] : f->bins) {
    total += count;
    in_range += count;
    sum += (static_cast<double>(bin) + 0.5) * static_cast<double>(count);
  }
  f->count = static_cast<int64_t>(total);
  if (in_range > 0 && f->overflows == 0) {
    f->avg_us = sum / static_cast<double>(in_range);
  }
  auto at = [&](double p) {
    const uint64_t rank = std::max<uint64_t>(
        1,
        static_cast<uint64_t>(std::ceil(p / 100 * static_cast<double>(total))));
    uint64_t seen = 0;
    for (const auto& [bin, count] : f->bins) {
      seen += count;
      if (seen >= rank) return static_cast<double>(bin) + 0.5;
    }
    return f->max_us;
  };
  f->p50_us = at(50);
  f->p99_us = at(99);
  f->p999_us = at(99.9);
}

Figures Merge(std::string name, const std::vector<Figures>& runs) {
  Figures merged;
  merged.name = std::move(name);
  double weighted = 0;
  int64_t count = 0;
  merged.min_us = INFINITY;
  merged.max_us = -INFINITY;
  for (const Figures& f : runs) {
    for (const auto& [bin, c] : f.bins) merged.bins[bin] += c;
    merged.overflows += f.overflows;
    merged.min_us = std::min(merged.min_us, f.min_us);
    merged.max_us = std::max(merged.max_us, f.max_us);
    weighted += f.avg_us * static_cast<double>(f.count);
    count += f.count;
  }
  if (count == 0) {
    Figures empty;
    empty.name = std::move(merged.name);
    return empty;
  }
  merged.avg_us = weighted / static_cast<double>(count);
  merged.count = count;
  if (!merged.bins.empty() || merged.overflows > 0) FillPercentiles(&merged);
  return merged;
}

absl::StatusOr<Figures> ParseCyclictest(std::string_view output) {
  Figures f;
  f.name = "cyclictest";
  std::istringstream in{std::string(output)};
  std::string line;
  bool have_min = false, have_avg = false, have_max = false;
  const std::regex summary(
      R"(# (Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows): (\d+))");
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, summary)) {
      const std::string what = match[1];
      const double value = std::stod(match[2]);
      if (what == "Min Latencies") {
        f.min_us = value;
        have_min = true;
      } else if (what == "Avg Latencies") {
        f.avg_us = value;
        have_avg = true;
      } else if (what == "Max Latencies") {
        f.max_us = value;
        have_max = true;
      } else {
        f.overflows = static_cast<uint64_t>(value);
      }
      continue;
    }
    long long bin, count;
    if (!line.empty() && line[0] != '#' &&
        sscanf(line.c_str(), "%lld %lld", &bin, &count) == 2 && count > 0) {
      f.bins[bin] += static_cast<uint64_t>(count);
    }
  }
  if (!have_min || !have_avg || !have_max) {
    return absl::InvalidArgumentError(
        "cyclictest printed no \"# Min/Avg/Max Latencies\" summary (was it "
        "run with -q --histogram?)");
  }
  FillPercentiles(&f);
  return f;
}

absl::StatusOr<Figures> ParseRtTestsJson(std::string name,
                                         std::string_view json) {
  std::match_results<std::string_view::const_iterator> match;
  static const std::regex receiver(
      R"("receiver":\s*\{[^}]*"min":\s*([0-9.]+),\s*"avg":\s*([0-9.]+),\s*"max":\s*([0-9.]+))");
  if (!std::regex_search(json.begin(), json.end(), match, receiver)) {
    return absl::InvalidArgumentError(
        StrCat(name, "'s --json file holds no receiver min/avg/max"));
  }
  Figures f;
  f.name = std::move(name);
  f.min_us = std::stod(match[1].str());
  f.avg_us = std::stod(match[2].str());
  f.max_us = std::stod(match[3].str());
  static const std::regex samples(R"("samples":\s*(\d+))");
  if (!std::regex_search(json.begin(), json.end(), match, samples)) {
    return absl::InvalidArgumentError(
        StrCat(f.name, "'s --json file holds no sample count"));
  }
  f.count = std::stoll(match[1].str());
  return f;
}

}  // namespace aos::bench
