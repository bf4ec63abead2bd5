#include "tools/bench/ddsperf_output.h"

#include <charconv>
#include <cmath>
#include <string>

#include "aos/util/str_cat.h"

namespace aos::bench {
namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool ParseDouble(std::string_view text, double* out) {
  // std::from_chars for double is in g++ 11 and later.
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// "48.673us", "1.2ms", "3s" in microseconds.
bool ParseDurationUs(std::string_view text, double* us) {
  double scale = 1;
  if (text.ends_with("us")) {
    text.remove_suffix(2);
  } else if (text.ends_with("ms")) {
    text.remove_suffix(2);
    scale = 1e3;
  } else if (text.ends_with("ns")) {
    text.remove_suffix(2);
    scale = 1e-3;
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
    scale = 1e6;
  } else {
    return false;
  }
  if (!ParseDouble(text, us)) return false;
  *us *= scale;
  return true;
}

// The token after `key` in `tokens`, or "" if there is none.
std::string_view After(const std::vector<std::string_view>& tokens,
                       std::string_view key) {
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i] == key) return tokens[i + 1];
  }
  return {};
}

}  // namespace

absl::StatusOr<Figures> ReadDdsperfPing(std::string_view output,
                                        std::string name) {
  Figures f;
  f.name = std::move(name);
  double sum_avg = 0, sum_p50 = 0, sum_p99 = 0;
  for (std::string_view line : Split(output, '\n')) {
    const std::vector<std::string_view> tokens = Split(line, ' ');
    // "[pid] time peer size N mean ...": a latency line has "mean" and "50%".
    if (tokens.size() < 4 || tokens[0].front() != '[' ||
        After(tokens, "mean").empty() || After(tokens, "50%").empty()) {
      continue;
    }
    double mean, min, p50, p99, max, count;
    if (!ParseDurationUs(After(tokens, "mean"), &mean) ||
        !ParseDurationUs(After(tokens, "min"), &min) ||
        !ParseDurationUs(After(tokens, "50%"), &p50) ||
        !ParseDurationUs(After(tokens, "99%"), &p99) ||
        !ParseDurationUs(After(tokens, "max"), &max) ||
        !ParseDouble(After(tokens, "cnt"), &count)) {
      return absl::InvalidArgumentError(
          StrCat("ddsperf ping: a latency line without mean, min, 50%, 99%, "
                 "max and cnt as expected: \"",
                 line, "\""));
    }
    if (count <= 0) continue;
    f.count += static_cast<int64_t>(count);
    sum_avg += mean * count;
    sum_p50 += p50 * count;
    sum_p99 += p99 * count;
    f.min_us = std::isnan(f.min_us) ? min : std::min(f.min_us, min);
    f.max_us = std::isnan(f.max_us) ? max : std::max(f.max_us, max);
  }
  if (f.count == 0) {
    return absl::NotFoundError(
        "ddsperf ping printed no latency line (did pong answer?)");
  }
  const double n = static_cast<double>(f.count);
  f.avg_us = sum_avg / n;
  f.p50_us = sum_p50 / n;
  f.p99_us = sum_p99 / n;
  return f;
}

absl::StatusOr<DdsperfRate> ReadDdsperfSub(std::string_view output) {
  struct Point {
    double t;
    int64_t total, lost, delta;
  };
  std::vector<Point> points;
  int32_t size = 0;
  for (std::string_view line : Split(output, '\n')) {
    const std::vector<std::string_view> tokens = Split(line, ' ');
    if (tokens.size() < 4 || tokens[0].front() != '[' || tokens[2] != "size" ||
        After(tokens, "total").empty()) {
      continue;
    }
    double t, size_value, total, lost, delta;
    if (!ParseDouble(tokens[1], &t) ||
        !ParseDouble(After(tokens, "size"), &size_value) ||
        !ParseDouble(After(tokens, "total"), &total) ||
        !ParseDouble(After(tokens, "lost"), &lost) ||
        !ParseDouble(After(tokens, "delta"), &delta)) {
      return absl::InvalidArgumentError(
          StrCat("ddsperf sub: a rate line without time, size, total, lost "
                 "and delta as expected: \"",
                 line, "\""));
    }
    size = static_cast<int32_t>(size_value);
    points.push_back({t, static_cast<int64_t>(total),
                      static_cast<int64_t>(lost), static_cast<int64_t>(delta)});
  }
  while (!points.empty() && points.back().delta == 0) points.pop_back();
  if (points.empty()) {
    return absl::NotFoundError("ddsperf sub received nothing");
  }
  DdsperfRate rate;
  rate.total = points.back().total;
  rate.lost = points.back().lost;
  rate.size_bytes = size;
  // Leave out the first interval: discovery, and pub starting within it.
  size_t first = 0;
  while (first < points.size() && points[first].delta == 0) ++first;
  // And the last, in which the publisher stopped, when there are enough.
  const size_t full = points.size() - first;
  if (full >= 3) {
    const Point& a = points[first];
    const Point& b = full >= 4 ? points[points.size() - 2] : points.back();
    rate.per_s = static_cast<double>(b.total - a.total) / (b.t - a.t);
  } else {
    rate.per_s = static_cast<double>(rate.total) / points.back().t;
  }
  return rate;
}

}  // namespace aos::bench
