#include "tools/bench/streamed_summaries.h"

#include <utility>

#include "absl/status/status.h"
#include "aos/util/json_document.h"
#include "aos/util/str_cat.h"

namespace aos::bench {
namespace {

// `value` (ns, a number or null) in us; NaN for null or a missing value
// (the streamer leaves out what has no samples). A value of the wrong type,
// or one under a parent of the wrong type, is an error.
absl::StatusOr<double> MicrosecondsOrNan(const JsonValue& value) {
  if (!value.exists()) {
    if (absl::IsNotFound(value.status())) return NAN;
    return value.status();
  }
  absl::StatusOr<double> ns = value.NumberOrNan();
  if (!ns.ok()) return ns.status();
  return *ns / 1000;
}

// The figures of one entry of a streamed report's "percentiles".
absl::StatusOr<CallbackFigures> FiguresOf(const JsonValue& entry) {
  CallbackFigures figures;
  absl::StatusOr<double> wakeup =
      MicrosecondsOrNan(entry["wakeup_latency"]["p50_ns"]);
  if (!wakeup.ok()) return wakeup.status();
  figures.wakeup_p50_us = *wakeup;
  const JsonValue paths = entry["paths"];
  if (!paths.exists()) return figures;
  absl::StatusOr<std::vector<JsonValue>> each = paths.Elements();
  if (!each.ok()) return each.status();
  for (const JsonValue& path : *each) {
    absl::StatusOr<int64_t> hops = path["hops"].Integer();
    if (!hops.ok()) return hops.status();
    if (*hops <= figures.hops) continue;
    absl::StatusOr<double> age = MicrosecondsOrNan(path["age"]["p50_ns"]);
    if (!age.ok()) return age.status();
    absl::StatusOr<double> uncertainty =
        MicrosecondsOrNan(path["max_uncertainty_ns"]);
    if (!uncertainty.ok()) return uncertainty.status();
    figures.hops = static_cast<int>(*hops);
    figures.path_age_p50_us = *age;
    figures.path_uncertainty_us = *uncertainty;
  }
  return figures;
}

}  // namespace

absl::StatusOr<StreamedSummaries> StreamedSummaries::Parse(
    std::string_view text, std::string source) {
  StreamedSummaries summaries;
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    absl::StatusOr<JsonDocument> doc =
        JsonDocument::Parse(line, StrCat(source, ", line ", line_number));
    if (!doc.ok()) return doc.status();
    const JsonValue root = doc->root();
    const JsonValue accumulated = root["accumulated"];
    // Not a report (a notice of silent applications).
    if (!accumulated.exists()) continue;
    absl::StatusOr<bool> is_summary = accumulated.Boolean();
    if (!is_summary.ok()) return is_summary.status();
    // One window's report.
    if (!*is_summary) continue;
    absl::StatusOr<std::string> application = root["report"]["name"].String();
    if (!application.ok()) return application.status();
    ++summaries.reports_;
    const JsonValue percentiles = root["percentiles"];
    if (!percentiles.exists()) continue;
    absl::StatusOr<std::vector<JsonValue>> entries = percentiles.Elements();
    if (!entries.ok()) return entries.status();
    for (const JsonValue& entry : *entries) {
      absl::StatusOr<std::string> kind = entry["kind"].String();
      if (!kind.ok()) return kind.status();
      if (*kind != "watcher") continue;
      absl::StatusOr<std::string> name = entry["name"].String();
      if (!name.ok()) return name.status();
      absl::StatusOr<std::string> type = entry["type"].String();
      if (!type.ok()) return type.status();
      absl::StatusOr<CallbackFigures> figures = FiguresOf(entry);
      if (!figures.ok()) return figures.status();
      summaries.watchers_.push_back(
          {*application, std::move(*name), std::move(*type), *figures});
    }
  }
  return summaries;
}

CallbackFigures StreamedSummaries::Watcher(std::string_view application,
                                           std::string_view name,
                                           std::string_view type) const {
  for (const WatcherEntry& watcher : watchers_) {
    if (watcher.application == application && watcher.name == name &&
        watcher.type == type) {
      return watcher.figures;
    }
  }
  return CallbackFigures();
}

}  // namespace aos::bench
