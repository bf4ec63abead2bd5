#include "tools/bench/bench_inputs.h"

#include <array>
#include <utility>

#include "aos/util/str_cat.h"

namespace aos::bench {

absl::StatusOr<RoundTrip> ReadPingSummary(const JsonValue& root) {
  RoundTrip round_trip;
  const absl::Status numbers =
      ReadNumbers(root["round_trip_us"],
                  {{"avg", &round_trip.avg_us}, {"p50", &round_trip.p50_us}},
                  /*null_is_nan=*/true);
  if (!numbers.ok()) return numbers;
  return round_trip;
}

absl::StatusOr<double> MicrobenchmarkNs(const JsonValue& root,
                                        std::string_view name) {
  absl::StatusOr<std::vector<JsonValue>> benchmarks =
      root["benchmarks"].Elements();
  if (!benchmarks.ok()) return benchmarks.status();
  for (const JsonValue& benchmark : *benchmarks) {
    const absl::StatusOr<std::string> this_name = benchmark["name"].String();
    if (!this_name.ok()) return this_name.status();
    if (*this_name != name) continue;
    const absl::StatusOr<double> time = benchmark["real_time"].Number();
    if (!time.ok()) return time.status();
    const absl::StatusOr<std::string> unit = benchmark["time_unit"].String();
    if (!unit.ok()) return unit.status();
    constexpr std::array<std::pair<std::string_view, double>, 4> kUnits = {
        {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}};
    for (const auto& [known, ns] : kUnits) {
      if (*unit == known) return *time * ns;
    }
    return absl::InvalidArgumentError(
        StrCat(benchmark.source(), ": ", benchmark.path(), ".time_unit is \"",
               *unit, "\", not ns, us, ms or s"));
  }
  return absl::NotFoundError(
      StrCat(root.source(), ": no benchmark named ", name, " in benchmarks"));
}

absl::StatusOr<Figures> ReadShmWakeupRow(const JsonValue& root,
                                         std::string_view key) {
  return ReadFigures(root["rows"][key]);
}

}  // namespace aos::bench
