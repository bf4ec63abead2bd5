#include "aos/events/timing_report_accumulator.h"

#include <algorithm>

namespace aos {
namespace {

// Merges each entry of `from` into the entry of `into` with the same key,
// appending the ones not there yet.
template <typename Entry, typename Key>
void MergeEntries(const std::vector<Entry>& from, std::vector<Entry>* into,
                  Key key) {
  for (const Entry& entry : from) {
    auto it = std::find_if(into->begin(), into->end(), [&](const Entry& e) {
      return key(e) == key(entry);
    });
    if (it == into->end()) {
      into->push_back(entry);
    } else {
      it->Merge(entry);
    }
  }
}

}  // namespace

void TimingReportAccumulator::Add(const timing::ReportContents& report) {
  const timing::ReportHeader& in = report.header;
  auto [it, first] = applications_.try_emplace({in.node, in.name, in.pid});
  timing::ReportContents& app = it->second;
  timing::ReportHeader& out = app.header;
  if (first) {
    out = in;
  } else {
    out.version = in.version;
    out.node = in.node;
    if (in.monotonic_start_ns < out.monotonic_start_ns) {
      out.monotonic_start_ns = in.monotonic_start_ns;
      out.realtime_start_ns = in.realtime_start_ns;
    }
    if (in.monotonic_end_ns >= out.monotonic_end_ns) {
      out.monotonic_end_ns = in.monotonic_end_ns;
      out.cpu_latency_limit_us = in.cpu_latency_limit_us;
      out.cpu_latency_limit_cpus = in.cpu_latency_limit_cpus;
      out.busy_poll_us = in.busy_poll_us;
      out.idle_poll_cpus = in.idle_poll_cpus;
      out.timer_anticipation_lead_ns = in.timer_anticipation_lead_ns;
      out.timer_anticipation_auto = in.timer_anticipation_auto;
      // A running total since the process started (AOS's meaning): the
      // newest report has it.
      out.send_failures = in.send_failures;
    }
    out.dropped_histograms += in.dropped_histograms;
    out.dropped_entries += in.dropped_entries;
    out.reopened_queue_files += in.reopened_queue_files;
    out.busy_poll_ns += in.busy_poll_ns;
    out.busy_poll_wakeups += in.busy_poll_wakeups;
    out.timer_anticipation_ns += in.timer_anticipation_ns;
    out.timer_wakeups += in.timer_wakeups;
    out.timer_wakeups_early += in.timer_wakeups_early;
  }
  auto by_channel = [](const auto& entry) { return entry.channel_index; };
  auto by_name = [](const timing::TimerTiming& entry) { return entry.name; };
  MergeEntries(report.watchers, &app.watchers, by_channel);
  MergeEntries(report.senders, &app.senders, by_channel);
  MergeEntries(report.fetchers, &app.fetchers, by_channel);
  MergeEntries(report.timers, &app.timers, by_name);
  MergeEntries(report.phased_loops, &app.phased_loops, by_name);
  ++reports_;
}

std::vector<timing::ReportContents> TimingReportAccumulator::Summaries() const {
  std::vector<timing::ReportContents> summaries;
  for (const auto& [key, app] : applications_) summaries.push_back(app);
  return summaries;
}

}  // namespace aos
