#include "tools/bench/bench_figures.h"

#include <algorithm>
#include <charconv>

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
  for (const auto& [bin, count] : f->bins) total += count;
  f->count = static_cast<int64_t>(total);
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

void WriteFigures(const Figures& f, JsonWriter* json) {
  json->BeginObject();
  json->Key("name").String(f.name);
  json->Key("count").Number(f.count);
  json->Key("min_us").Number(f.min_us);
  json->Key("avg_us").Number(f.avg_us);
  json->Key("p50_us").Number(f.p50_us);
  json->Key("p99_us").Number(f.p99_us);
  json->Key("p999_us").Number(f.p999_us);
  json->Key("max_us").Number(f.max_us);
  json->Key("histogram_overflows").Number(f.overflows);
  json->Key("classes_us").BeginObject();
  for (const auto& [bin, count] : f.bins) {
    if (count > 0) json->Key(StrCat(bin)).Number(count);
  }
  json->EndObject();
  json->EndObject();
}

absl::Status ReadClasses(const JsonValue& classes,
                         std::map<int64_t, uint64_t>* bins) {
  auto members = classes.Members();
  if (!members.ok()) return members.status();
  for (const auto& [key, value] : *members) {
    int64_t bin = 0;
    const auto [end, error] =
        std::from_chars(key.data(), key.data() + key.size(), bin);
    if (error != std::errc() || end != key.data() + key.size()) {
      return absl::InvalidArgumentError(
          StrCat(value.source(), ": ", value.path(), ": the class \"", key,
                 "\" is not a whole number of microseconds"));
    }
    absl::StatusOr<int64_t> count = value.Integer();
    if (!count.ok()) return count.status();
    if (*count < 0) {
      return absl::InvalidArgumentError(
          StrCat(value.source(), ": ", value.path(), " is a negative count, ",
                 *count));
    }
    (*bins)[bin] += static_cast<uint64_t>(*count);
  }
  return absl::OkStatus();
}

absl::StatusOr<Figures> ReadFigures(const JsonValue& value) {
  Figures f;
  absl::StatusOr<std::string> name = value["name"].String();
  if (!name.ok()) return name.status();
  f.name = *std::move(name);
  absl::StatusOr<int64_t> count = value["count"].Integer();
  if (!count.ok()) return count.status();
  f.count = *count;
  const absl::Status numbers = ReadNumbers(value,
                                           {{"min_us", &f.min_us},
                                            {"avg_us", &f.avg_us},
                                            {"p50_us", &f.p50_us},
                                            {"p99_us", &f.p99_us},
                                            {"p999_us", &f.p999_us},
                                            {"max_us", &f.max_us}},
                                           /*null_is_nan=*/true);
  if (!numbers.ok()) return numbers;
  absl::StatusOr<int64_t> overflows = value["histogram_overflows"].Integer();
  if (!overflows.ok()) return overflows.status();
  f.overflows = static_cast<uint64_t>(*overflows);
  absl::Status classes = ReadClasses(value["classes_us"], &f.bins);
  if (!classes.ok()) return classes;
  return f;
}

}  // namespace aos::bench
