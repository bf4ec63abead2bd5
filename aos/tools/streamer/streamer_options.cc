#include "aos/tools/streamer/streamer_options.h"

#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {
namespace {

OutputFormat FormatNamed(std::string_view name) {
  if (name == "aos") return OutputFormat::kAos;
  if (name == "json") return OutputFormat::kJson;
  if (name == "csv") return OutputFormat::kCsv;
  return OutputFormat::kTable;
}

}  // namespace

absl::StatusOr<StreamerOptions> ParseStreamerOptions(
    const StreamerFlags& flags) {
  StreamerOptions options;
  options.flags = flags;
  if (absl::Status status =
          CheckOneOf("--format", flags.format, {"table", "aos", "json", "csv"});
      !status.ok()) {
    return status;
  }
  options.format = FormatNamed(flags.format);
  if (!flags.log.empty()) {
    for (const auto& [flag, set] :
         {std::pair{"--duration", flags.duration != 0},
          std::pair{"--top", flags.top},
          std::pair{"--metrics_port", flags.metrics_port != 0}}) {
      if (set) {
        return absl::InvalidArgumentError(
            StrCat(flag, " watches live reports; drop it with --log"));
      }
    }
  }
  if (!ParseTimeUnit(flags.units, &options.unit)) {
    return CheckOneOf("--units", flags.units, {"ns", "us", "ms"});
  }
  for (const auto& [flag, value] :
       {std::pair{"--count", static_cast<double>(flags.count)},
        std::pair{"--top_rows", static_cast<double>(flags.top_rows)},
        std::pair{"--duration", flags.duration},
        std::pair{"--max_wakeup_latency_us", flags.max_wakeup_latency_us},
        std::pair{"--max_path_age_us", flags.max_path_age_us},
        std::pair{"--no_match_warning_s", flags.no_match_warning_s},
        std::pair{"--silent_after_s", flags.silent_after_s}}) {
    if (absl::Status status = CheckNotNegative(flag, value); !status.ok()) {
      return status;
    }
  }
  if (absl::Status status =
          CheckInRange("--metrics_port", flags.metrics_port, 0, 65535,
                       " is not a TCP port: give 1-65535 (0: off)");
      !status.ok()) {
    return status;
  }
  for (const auto& [flag, path] :
       {std::pair{"--histogram_file", flags.histogram_file},
        std::pair{"--plot", flags.plot}}) {
    if (absl::Status status = CheckWritableFile(flag, path); !status.ok()) {
      return status;
    }
  }
  if (absl::Status status = CheckInRange("--snapshot_interval_s",
                                         flags.snapshot_interval_s, 0.0, 1e7);
      !status.ok()) {
    return status;
  }
  if (!flags.snapshot_dir.empty()) {
    if (flags.max_wakeup_latency_us <= 0) {
      return absl::InvalidArgumentError(
          "--snapshot_dir snapshots reports over --max_wakeup_latency_us: "
          "give that too");
    }
    if (!flags.log.empty()) {
      return absl::InvalidArgumentError(
          "--snapshot_dir reads live rings; drop it with --log");
    }
    std::error_code error;
    if (!std::filesystem::is_directory(flags.snapshot_dir, error)) {
      return absl::InvalidArgumentError(
          StrCat("--snapshot_dir=", flags.snapshot_dir, ": no such directory"));
    }
  }
  for (const std::string& name : std::vector<std::string>(
           absl::StrSplit(flags.application, ',', absl::SkipEmpty()))) {
    options.applications.insert(name);
  }
  return options;
}

}  // namespace aos::streamer
