#include "aos/events/timing_report_dump.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/flatbuffer_merge.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/time/time.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos {
namespace {

// A table whose columns are right-aligned to their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) {
    rows_.push_back(std::move(header));
  }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  void Print(std::ostream* out) const {
    std::vector<size_t> widths(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i)
        widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows_) {
      *out << "   ";
      for (size_t i = 0; i < row.size(); ++i) {
        *out << (i == 0 ? " " : " | ")
             << std::string(widths[i] - row[i].size(), ' ') << row[i];
      }
      *out << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// A double as AOS prints it (iostream defaults: 6 significant digits).
std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string FormatStatistic(const timing::Statistic* statistic) {
  if (statistic == nullptr) return "nan [nan, nan] std nan";
  return StrCat(Number(statistic->average()), " [", Number(statistic->min()),
                ", ", Number(statistic->max()), "] std ",
                Number(statistic->standard_deviation()));
}

// p-th percentile of an encoded histogram, in seconds; "-" without one.
std::string Percentile(const timing::Histogram* encoded, double percentile) {
  if (encoded == nullptr) return "-";
  timing::LatencyHistogram histogram;
  std::string error;
  if (!timing::LatencyHistogram::Decode(*encoded, &histogram, &error) ||
      histogram.count() == 0) {
    return "-";
  }
  return Number(static_cast<double>(histogram.PercentileNs(percentile)) * 1e-9);
}

// Which regime the figures come from: CPUs kept out of deep idle states by
// a PM QoS limit the loop held, or free to sleep.
std::string CpuLatencyLimitText(const timing::Report& report) {
  if (report.cpu_latency_limit_us() < 0) return "CPU wakeup limit: none";
  const std::string_view cpus =
      report.cpu_latency_limit_cpus() == nullptr
          ? std::string_view()
          : report.cpu_latency_limit_cpus()->string_view();
  return StrCat("CPU wakeup limit: ", report.cpu_latency_limit_us(), " us, ",
                cpus == "all" ? "all CPUs" : StrCat("CPUs ", cpus));
}

std::string ChannelName(const Configuration& config, int index) {
  if (config.channels() == nullptr || index < 0 ||
      static_cast<size_t>(index) >= config.channels()->size()) {
    return StrCat("<channel ", index, "?>");
  }
  return config.channels()->Get(index)->name()->str();
}

std::string ChannelType(const Configuration& config, int index) {
  if (config.channels() == nullptr || index < 0 ||
      static_cast<size_t>(index) >= config.channels()->size()) {
    return "?";
  }
  return config.channels()->Get(index)->type()->str();
}

void PrintTimers(
    std::string_view title,
    const flatbuffers::Vector<flatbuffers::Offset<timing::Timer>>* timers,
    std::ostream* out) {
  if (timers == nullptr || timers->size() == 0) return;
  *out << "  " << title << " (" << timers->size() << "):\n";
  Table table({"Name", "Count", "Wakeup Latency", "p50", "p99", "Handler Time",
               "p50", "p99", "Missed"});
  for (const timing::Timer* timer : *timers) {
    table.AddRow({timer->name() == nullptr ? "" : timer->name()->str(),
                  StrCat(timer->count()),
                  FormatStatistic(timer->wakeup_latency()),
                  Percentile(timer->wakeup_latency_histogram(), 50),
                  Percentile(timer->wakeup_latency_histogram(), 99),
                  FormatStatistic(timer->handler_time()),
                  Percentile(timer->handler_time_histogram(), 50),
                  Percentile(timer->handler_time_histogram(), 99),
                  StrCat(timer->missed_cycles())});
  }
  table.Print(out);
}

}  // namespace

std::string FormatTimingReport(const timing::Report& report,
                               const Configuration& config) {
  std::ostringstream out;
  out << (report.name() == nullptr ? "" : report.name()->str()) << "["
      << report.pid() << "] ("
      << (report.node() == nullptr ? "" : report.node()->str())
      << ") version: \""
      << (report.version() == nullptr ? "" : report.version()->str()) << "\" ("
      << monotonic_clock::time_point(
             std::chrono::nanoseconds(report.monotonic_start_time()))
      << ","
      << realtime_clock::time_point(
             std::chrono::nanoseconds(report.realtime_start_time()))
      << "):\n  Window: "
      << DurationInSeconds(std::chrono::nanoseconds(
             report.monotonic_end_time() - report.monotonic_start_time()))
      << " sec, until "
      << monotonic_clock::time_point(
             std::chrono::nanoseconds(report.monotonic_end_time()))
      << "; " << CpuLatencyLimitText(report) << "\n";
  if (report.watchers() != nullptr && report.watchers()->size() > 0) {
    out << "  Watchers (" << report.watchers()->size() << "):\n";
    Table table({"Channel Name", "Type", "Count", "Wakeup Latency", "p50",
                 "p99", "Handler Time", "p50", "p99", "Lost"});
    for (const timing::Watcher* watcher : *report.watchers()) {
      table.AddRow({ChannelName(config, watcher->channel_index()),
                    ChannelType(config, watcher->channel_index()),
                    StrCat(watcher->count()),
                    FormatStatistic(watcher->wakeup_latency()),
                    Percentile(watcher->wakeup_latency_histogram(), 50),
                    Percentile(watcher->wakeup_latency_histogram(), 99),
                    FormatStatistic(watcher->handler_time()),
                    Percentile(watcher->handler_time_histogram(), 50),
                    Percentile(watcher->handler_time_histogram(), 99),
                    StrCat(watcher->lost_messages())});
    }
    table.Print(&out);
  }
  if (report.senders() != nullptr && report.senders()->size() > 0) {
    out << "  Senders (" << report.senders()->size() << "):\n";
    Table table({"Channel Name", "Type", "Count", "Size", "Errors"});
    for (const timing::Sender* sender : *report.senders()) {
      std::vector<std::string> errors;
      if (sender->error_counts() != nullptr) {
        for (const timing::SendErrorCount* error : *sender->error_counts()) {
          errors.push_back(StrCat(error->count()));
        }
      }
      table.AddRow({ChannelName(config, sender->channel_index()),
                    ChannelType(config, sender->channel_index()),
                    StrCat(sender->count()), FormatStatistic(sender->size()),
                    StrJoin(errors, ", ")});
    }
    table.Print(&out);
  }
  if (report.fetchers() != nullptr && report.fetchers()->size() > 0) {
    out << "  Fetchers (" << report.fetchers()->size() << "):\n";
    Table table(
        {"Channel Name", "Type", "Count", "Latency", "p50", "p99", "Lost"});
    for (const timing::Fetcher* fetcher : *report.fetchers()) {
      table.AddRow({ChannelName(config, fetcher->channel_index()),
                    ChannelType(config, fetcher->channel_index()),
                    StrCat(fetcher->count()),
                    FormatStatistic(fetcher->latency()),
                    Percentile(fetcher->latency_histogram(), 50),
                    Percentile(fetcher->latency_histogram(), 99),
                    StrCat(fetcher->lost_messages())});
    }
    table.Print(&out);
  }
  PrintTimers("Timers", report.timers(), &out);
  PrintTimers("Phased loops", report.phased_loops(), &out);
  if (report.dropped_histograms() > 0 || report.dropped_entries() > 0 ||
      report.send_failures() > 0) {
    out << "  Dropped to fit: " << report.dropped_histograms()
        << " histograms, " << report.dropped_entries()
        << " entries; reports not sent: " << report.send_failures() << "\n";
  }
  return out.str();
}

namespace {

flatbuffers::Offset<timing::Percentiles> EncodePercentiles(
    flatbuffers::FlatBufferBuilder* fbb, const timing::Histogram* encoded) {
  if (encoded == nullptr) return {};
  timing::LatencyHistogram histogram;
  std::string error;
  if (!timing::LatencyHistogram::Decode(*encoded, &histogram, &error) ||
      histogram.count() == 0) {
    return {};
  }
  return timing::CreatePercentiles(
      *fbb, histogram.PercentileNs(50), histogram.PercentileNs(90),
      histogram.PercentileNs(99), histogram.PercentileNs(99.9),
      histogram.max_ns());
}

std::string ReportOwner(const timing::Report& report) {
  return StrCat(report.name() == nullptr ? "" : report.name()->string_view(),
                "[", report.pid(), "]");
}

// Calls fn(kind, name, type, wakeup, handler, latency) for every entry.
template <typename F>
void ForEachEntry(const timing::Report& report, const Configuration& config,
                  F&& fn) {
  if (report.watchers() != nullptr) {
    for (const timing::Watcher* w : *report.watchers()) {
      fn("watcher", ChannelName(config, w->channel_index()),
         ChannelType(config, w->channel_index()), w->wakeup_latency_histogram(),
         w->handler_time_histogram(),
         static_cast<const timing::Histogram*>(nullptr), w->wakeup_latency());
    }
  }
  if (report.fetchers() != nullptr) {
    for (const timing::Fetcher* f : *report.fetchers()) {
      fn("fetcher", ChannelName(config, f->channel_index()),
         ChannelType(config, f->channel_index()),
         static_cast<const timing::Histogram*>(nullptr),
         static_cast<const timing::Histogram*>(nullptr), f->latency_histogram(),
         static_cast<const timing::Statistic*>(nullptr));
    }
  }
  for (const auto& [kind, timers] :
       {std::pair{"timer", report.timers()},
        std::pair{"phased_loop", report.phased_loops()}}) {
    if (timers == nullptr) continue;
    for (const timing::Timer* t : *timers) {
      fn(kind, t->name() == nullptr ? std::string() : t->name()->str(),
         std::string(), t->wakeup_latency_histogram(),
         t->handler_time_histogram(),
         static_cast<const timing::Histogram*>(nullptr), t->wakeup_latency());
    }
  }
}

}  // namespace

std::string TimingReportToJsonLine(const timing::Report& report,
                                   const Configuration& config,
                                   bool accumulated) {
  const reflection::Schema& schema =
      *reflection::GetSchema(timing::StreamedReportBinarySchema::data());
  flatbuffers::FlatBufferBuilder fbb;
  const auto copied = CopyFlatbufferTable(
      &fbb, schema, *schema.objects()->LookupByKey("aos.timing.Report"),
      *reinterpret_cast<const flatbuffers::Table*>(&report));
  std::vector<flatbuffers::Offset<timing::EntryPercentiles>> entries;
  ForEachEntry(report, config,
               [&](std::string_view kind, const std::string& name,
                   const std::string& type, const timing::Histogram* wakeup,
                   const timing::Histogram* handler,
                   const timing::Histogram* latency, const timing::Statistic*) {
                 const auto wakeup_p = EncodePercentiles(&fbb, wakeup);
                 const auto handler_p = EncodePercentiles(&fbb, handler);
                 const auto latency_p = EncodePercentiles(&fbb, latency);
                 const auto kind_offset = fbb.CreateString(kind);
                 const auto name_offset = fbb.CreateString(name);
                 const auto type_offset =
                     type.empty() ? flatbuffers::Offset<flatbuffers::String>()
                                  : fbb.CreateString(type);
                 timing::EntryPercentiles::Builder builder(fbb);
                 builder.add_kind(kind_offset);
                 builder.add_name(name_offset);
                 if (!type.empty()) builder.add_type(type_offset);
                 if (!wakeup_p.IsNull()) builder.add_wakeup_latency(wakeup_p);
                 if (!handler_p.IsNull()) builder.add_handler_time(handler_p);
                 if (!latency_p.IsNull()) builder.add_latency(latency_p);
                 entries.push_back(builder.Finish());
               });
  const auto entry_vector = fbb.CreateVector(entries);
  timing::StreamedReport::Builder streamed(fbb);
  streamed.add_accumulated(accumulated);
  streamed.add_report(flatbuffers::Offset<timing::Report>(copied.o));
  streamed.add_percentiles(entry_vector);
  fbb.ForceDefaults(true);
  fbb.Finish(streamed.Finish());
  return FlatbufferToJson(fbb.GetBufferPointer(), schema);
}

std::string HistogramsAsGnuplotTable(
    const std::vector<FlatbufferDetachedBuffer<timing::Report>>& reports,
    const Configuration& config) {
  std::string out =
      "# aos timing histograms: one block per histogram (gnuplot: index N);\n"
      "# columns: bucket lower bound (us), upper bound (us), samples\n";
  bool first = true;
  for (const auto& buffer : reports) {
    const timing::Report& report = buffer.message();
    ForEachEntry(
        report, config,
        [&](std::string_view kind, const std::string& name, const std::string&,
            const timing::Histogram* wakeup, const timing::Histogram* handler,
            const timing::Histogram* latency, const timing::Statistic*) {
          for (const auto& [figure, encoded] :
               {std::pair{"wakeup_latency", wakeup},
                std::pair{"handler_time", handler},
                std::pair{"latency", latency}}) {
            timing::LatencyHistogram histogram;
            std::string error;
            if (encoded == nullptr ||
                !timing::LatencyHistogram::Decode(*encoded, &histogram,
                                                  &error) ||
                histogram.count() == 0) {
              continue;
            }
            if (!first) out += "\n\n";
            first = false;
            StrAppend(&out, "# ", ReportOwner(report), " ", kind, " ", name,
                      " ", figure, "\n");
            histogram.ForEachNonEmptyBucket(
                [&](size_t, int64_t lower, int64_t upper, uint64_t count) {
                  StrAppend(&out, Number(lower / 1e3), " ", Number(upper / 1e3),
                            " ", count, "\n");
                });
          }
        });
  }
  return out;
}

WorstWakeup FindWorstWakeup(
    const std::vector<FlatbufferDetachedBuffer<timing::Report>>& reports,
    const Configuration& config) {
  WorstWakeup worst;
  for (const auto& buffer : reports) {
    const timing::Report& report = buffer.message();
    ForEachEntry(
        report, config,
        [&](std::string_view kind, const std::string& name, const std::string&,
            const timing::Histogram*, const timing::Histogram*,
            const timing::Histogram*, const timing::Statistic* wakeup) {
          if (wakeup == nullptr || !(wakeup->max() * 1e6 > worst.max_us))
            return;
          worst.max_us = wakeup->max() * 1e6;
          worst.what = StrCat(ReportOwner(report), " ", kind, " ", name);
        });
  }
  return worst;
}

absl::Status ValidateTimingReport(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!verifier.VerifyBuffer<timing::Report>(nullptr)) {
    return absl::InvalidArgumentError(
        StrCat("not a valid aos.timing.Report (", bytes.size(),
               " bytes fail the flatbuffers verifier)"));
  }
  const timing::Report& report =
      *flatbuffers::GetRoot<timing::Report>(bytes.data());
  if (report.name() == nullptr) {
    return absl::InvalidArgumentError("timing report without a name");
  }
  std::string error;
  timing::LatencyHistogram scratch;
  auto check = [&](const timing::Histogram* histogram, std::string_view where) {
    if (histogram == nullptr ||
        timing::LatencyHistogram::Decode(*histogram, &scratch, &error)) {
      return true;
    }
    error = StrCat("timing report of ", report.name()->string_view(), ": ",
                   where, ": ", error);
    return false;
  };
  auto check_timers =
      [&](const flatbuffers::Vector<flatbuffers::Offset<timing::Timer>>*
              timers) {
        if (timers == nullptr) return true;
        for (const timing::Timer* timer : *timers) {
          const std::string where = StrCat(
              "timer ",
              timer->name() == nullptr ? "" : timer->name()->string_view());
          if (!check(timer->wakeup_latency_histogram(), where) ||
              !check(timer->handler_time_histogram(), where)) {
            return false;
          }
        }
        return true;
      };
  if (!check_timers(report.timers()) || !check_timers(report.phased_loops())) {
    return absl::InvalidArgumentError(error);
  }
  if (report.watchers() != nullptr) {
    for (const timing::Watcher* watcher : *report.watchers()) {
      const std::string where =
          StrCat("watcher of channel ", watcher->channel_index());
      if (!check(watcher->wakeup_latency_histogram(), where) ||
          !check(watcher->handler_time_histogram(), where)) {
        return absl::InvalidArgumentError(error);
      }
    }
  }
  if (report.fetchers() != nullptr) {
    for (const timing::Fetcher* fetcher : *report.fetchers()) {
      if (!check(fetcher->latency_histogram(),
                 StrCat("fetcher of channel ", fetcher->channel_index()))) {
        return absl::InvalidArgumentError(error);
      }
    }
  }
  return absl::OkStatus();
}

bool MergeEncodedLatency(const timing::Statistic* statistic,
                         const timing::Histogram* histogram, uint32_t count,
                         timing::RunningStatistic* statistic_total,
                         timing::LatencyHistogram* histogram_total) {
  // A statistic with no samples (NaN) adds nothing, even if the entry's
  // count says calls happened (a handler time is recorded after the report
  // of its call was built).
  if (statistic != nullptr && count > 0 && !std::isnan(statistic->average())) {
    statistic_total->Merge(timing::RunningStatistic::Decode(*statistic, count));
  }
  if (histogram == nullptr) return false;
  timing::LatencyHistogram decoded;
  std::string error;
  CHECK(timing::LatencyHistogram::Decode(*histogram, &decoded, &error))
      << "validate reports (ValidateTimingReport) before merging them: "
      << error;
  histogram_total->Merge(decoded);
  return true;
}

void TimingReportAccumulator::AddLatency(const timing::Statistic* statistic,
                                         const timing::Histogram* histogram,
                                         uint32_t count, Latency* latency) {
  if (MergeEncodedLatency(statistic, histogram, count, &latency->statistic,
                          &latency->histogram)) {
    latency->has_histogram = true;
  }
}

void TimingReportAccumulator::AddTimers(
    const flatbuffers::Vector<flatbuffers::Offset<timing::Timer>>* timers,
    std::vector<std::pair<std::string, TimerEntry>>* entries) {
  if (timers == nullptr) return;
  for (const timing::Timer* timer : *timers) {
    const std::string name =
        timer->name() == nullptr ? "" : timer->name()->str();
    auto it =
        std::find_if(entries->begin(), entries->end(),
                     [&](const auto& entry) { return entry.first == name; });
    if (it == entries->end())
      it = entries->insert(entries->end(), {name, TimerEntry()});
    TimerEntry& entry = it->second;
    entry.count += timer->count();
    AddLatency(timer->wakeup_latency(), timer->wakeup_latency_histogram(),
               timer->count(), &entry.wakeup);
    AddLatency(timer->handler_time(), timer->handler_time_histogram(),
               timer->count(), &entry.handler);
    entry.missed_cycles += timer->missed_cycles();
  }
}

absl::Status TimingReportAccumulator::Add(std::span<const uint8_t> bytes) {
  if (absl::Status status = ValidateTimingReport(bytes); !status.ok())
    return status;
  const timing::Report& report =
      *flatbuffers::GetRoot<timing::Report>(bytes.data());
  Application& app = applications_[{report.name()->str(), report.pid()}];
  app.name = report.name()->str();
  app.pid = report.pid();
  if (report.version() != nullptr) app.version = report.version()->str();
  if (report.node() != nullptr) app.node = report.node()->str();
  if (report.monotonic_start_time() < app.monotonic_start) {
    app.monotonic_start = report.monotonic_start_time();
    app.realtime_start = report.realtime_start_time();
  }
  if (report.monotonic_end_time() >= app.monotonic_end) {
    app.cpu_latency_limit_us = report.cpu_latency_limit_us();
    app.cpu_latency_limit_cpus = report.cpu_latency_limit_cpus() == nullptr
                                     ? ""
                                     : report.cpu_latency_limit_cpus()->str();
  }
  app.monotonic_end = std::max(app.monotonic_end, report.monotonic_end_time());
  app.send_failures += report.send_failures();
  app.dropped_histograms += report.dropped_histograms();
  app.dropped_entries += report.dropped_entries();

  auto find = [](auto* entries, int key) {
    auto it =
        std::find_if(entries->begin(), entries->end(),
                     [&](const auto& entry) { return entry.first == key; });
    if (it == entries->end()) {
      it = entries->insert(
          entries->end(),
          {key, typename std::decay_t<
                    decltype(*entries)>::value_type::second_type()});
    }
    return &it->second;
  };
  if (report.watchers() != nullptr) {
    for (const timing::Watcher* watcher : *report.watchers()) {
      WatcherEntry* entry = find(&app.watchers, watcher->channel_index());
      entry->count += watcher->count();
      AddLatency(watcher->wakeup_latency(), watcher->wakeup_latency_histogram(),
                 watcher->count(), &entry->wakeup);
      AddLatency(watcher->handler_time(), watcher->handler_time_histogram(),
                 watcher->count(), &entry->handler);
      entry->lost_messages += watcher->lost_messages();
    }
  }
  if (report.fetchers() != nullptr) {
    for (const timing::Fetcher* fetcher : *report.fetchers()) {
      FetcherEntry* entry = find(&app.fetchers, fetcher->channel_index());
      entry->count += fetcher->count();
      AddLatency(fetcher->latency(), fetcher->latency_histogram(),
                 fetcher->count(), &entry->latency);
      entry->lost_messages += fetcher->lost_messages();
    }
  }
  if (report.senders() != nullptr) {
    for (const timing::Sender* sender : *report.senders()) {
      SenderEntry* entry = find(&app.senders, sender->channel_index());
      entry->count += sender->count();
      if (sender->size() != nullptr && sender->count() > 0) {
        entry->size.Merge(
            timing::RunningStatistic::Decode(*sender->size(), sender->count()));
      }
      if (sender->error_counts() != nullptr) {
        for (const timing::SendErrorCount* error : *sender->error_counts()) {
          const size_t index = static_cast<size_t>(error->error());
          if (index >= entry->error_counts.size())
            entry->error_counts.resize(index + 1, 0);
          entry->error_counts[index] += error->count();
        }
      }
    }
  }
  AddTimers(report.timers(), &app.timers);
  AddTimers(report.phased_loops(), &app.phased_loops);
  ++reports_;
  return absl::OkStatus();
}

namespace {

uint32_t Clamp32(uint64_t value) {
  return static_cast<uint32_t>(std::min<uint64_t>(value, UINT32_MAX));
}

}  // namespace

std::vector<FlatbufferDetachedBuffer<timing::Report>>
TimingReportAccumulator::Summaries() const {
  std::vector<FlatbufferDetachedBuffer<timing::Report>> summaries;
  for (const auto& [key, app] : applications_) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.ForceDefaults(true);
    auto latency = [&](const Latency& l) {
      return std::make_pair(l.statistic.Encode(&fbb),
                            l.has_histogram
                                ? l.histogram.Encode(&fbb)
                                : flatbuffers::Offset<timing::Histogram>());
    };
    auto timers =
        [&](const std::vector<std::pair<std::string, TimerEntry>>& entries) {
          std::vector<flatbuffers::Offset<timing::Timer>> offsets;
          for (const auto& [name, entry] : entries) {
            const auto name_offset = fbb.CreateString(name);
            const auto wakeup = latency(entry.wakeup);
            const auto handler = latency(entry.handler);
            timing::Timer::Builder builder(fbb);
            builder.add_name(name_offset);
            builder.add_count(Clamp32(entry.count));
            builder.add_wakeup_latency(wakeup.first);
            builder.add_handler_time(handler.first);
            if (!wakeup.second.IsNull())
              builder.add_wakeup_latency_histogram(wakeup.second);
            if (!handler.second.IsNull())
              builder.add_handler_time_histogram(handler.second);
            builder.add_missed_cycles(Clamp32(entry.missed_cycles));
            offsets.push_back(builder.Finish());
          }
          return fbb.CreateVector(offsets);
        };
    std::vector<flatbuffers::Offset<timing::Watcher>> watchers;
    for (const auto& [channel, entry] : app.watchers) {
      const auto wakeup = latency(entry.wakeup);
      const auto handler = latency(entry.handler);
      timing::Watcher::Builder builder(fbb);
      builder.add_channel_index(channel);
      builder.add_count(Clamp32(entry.count));
      builder.add_wakeup_latency(wakeup.first);
      builder.add_handler_time(handler.first);
      if (!wakeup.second.IsNull())
        builder.add_wakeup_latency_histogram(wakeup.second);
      if (!handler.second.IsNull())
        builder.add_handler_time_histogram(handler.second);
      builder.add_lost_messages(Clamp32(entry.lost_messages));
      watchers.push_back(builder.Finish());
    }
    std::vector<flatbuffers::Offset<timing::Fetcher>> fetchers;
    for (const auto& [channel, entry] : app.fetchers) {
      const auto fetched = latency(entry.latency);
      timing::Fetcher::Builder builder(fbb);
      builder.add_channel_index(channel);
      builder.add_count(Clamp32(entry.count));
      builder.add_latency(fetched.first);
      if (!fetched.second.IsNull())
        builder.add_latency_histogram(fetched.second);
      builder.add_lost_messages(Clamp32(entry.lost_messages));
      fetchers.push_back(builder.Finish());
    }
    std::vector<flatbuffers::Offset<timing::Sender>> senders;
    for (const auto& [channel, entry] : app.senders) {
      const auto size = entry.size.Encode(&fbb);
      std::vector<flatbuffers::Offset<timing::SendErrorCount>> errors;
      for (size_t i = 0; i < entry.error_counts.size(); ++i) {
        errors.push_back(
            timing::CreateSendErrorCount(fbb, static_cast<timing::SendError>(i),
                                         Clamp32(entry.error_counts[i])));
      }
      const auto error_vector = fbb.CreateVector(errors);
      timing::Sender::Builder builder(fbb);
      builder.add_channel_index(channel);
      builder.add_count(Clamp32(entry.count));
      builder.add_size(size);
      builder.add_error_counts(error_vector);
      senders.push_back(builder.Finish());
    }
    const auto timer_vector = timers(app.timers);
    const auto phased_vector = timers(app.phased_loops);
    const auto watcher_vector = fbb.CreateVector(watchers);
    const auto fetcher_vector = fbb.CreateVector(fetchers);
    const auto sender_vector = fbb.CreateVector(senders);
    const auto name = fbb.CreateString(app.name);
    const auto version = fbb.CreateString(app.version);
    const auto node = fbb.CreateString(app.node);
    const auto cpu_latency_limit_cpus =
        fbb.CreateString(app.cpu_latency_limit_cpus);
    timing::Report::Builder report(fbb);
    report.add_name(name);
    report.add_pid(app.pid);
    report.add_version(version);
    report.add_node(node);
    report.add_watchers(watcher_vector);
    report.add_senders(sender_vector);
    report.add_fetchers(fetcher_vector);
    report.add_timers(timer_vector);
    report.add_phased_loops(phased_vector);
    report.add_send_failures(Clamp32(app.send_failures));
    report.add_monotonic_start_time(app.monotonic_start);
    report.add_monotonic_end_time(app.monotonic_end);
    report.add_realtime_start_time(app.realtime_start);
    report.add_dropped_histograms(Clamp32(app.dropped_histograms));
    report.add_dropped_entries(Clamp32(app.dropped_entries));
    report.add_cpu_latency_limit_us(app.cpu_latency_limit_us);
    report.add_cpu_latency_limit_cpus(cpu_latency_limit_cpus);
    fbb.Finish(report.Finish());
    summaries.emplace_back(fbb.Release());
  }
  return summaries;
}

}  // namespace aos
