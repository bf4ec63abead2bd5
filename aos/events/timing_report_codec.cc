#include "aos/events/timing_report_codec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/util/str_cat.h"

namespace aos::timing {
namespace {

using flatbuffers::Offset;

uint32_t Clamp32(uint64_t value) {
  return static_cast<uint32_t>(
      std::min<uint64_t>(value, std::numeric_limits<uint32_t>::max()));
}

// --- Size bounds: table data, its vtable (never shared, to be safe), the
// offset pointing at it, and alignment padding.
constexpr size_t kStatisticBound = 4 + 16 + 4 + 2 * 4 + 4 + 8;
constexpr size_t kTableOverhead = 4 + 4 + 8;  // soffset, vtable header, pad
constexpr size_t kStringOverhead = 4 + 1 + 3 + 4;
// One field: its vtable slot, the value (8 at most) and its padding.
constexpr size_t kFieldBound = 4 + 2 + 8;

size_t StringBound(size_t length) { return length + kStringOverhead; }

size_t HistogramBound(const LatencyHistogram& histogram) {
  return histogram.EncodedSizeBound() + 4 + 8;
}

// A wakeup latency and a handler time, encoded; histograms only if asked.
struct EncodedLatencies {
  Offset<Statistic> wakeup;
  Offset<Statistic> handler;
  Offset<Histogram> wakeup_histogram;
  Offset<Histogram> handler_histogram;
};

EncodedLatencies EncodeLatencies(flatbuffers::FlatBufferBuilder* fbb,
                                 const LatencyRecorder& wakeup,
                                 const LatencyRecorder& handler,
                                 bool histograms) {
  EncodedLatencies encoded;
  encoded.wakeup = wakeup.statistic().Encode(fbb);
  encoded.handler = handler.statistic().Encode(fbb);
  if (histograms) {
    encoded.wakeup_histogram = wakeup.histogram().Encode(fbb);
    encoded.handler_histogram = handler.histogram().Encode(fbb);
  }
  return encoded;
}

// Adds the latencies to a Timer or Watcher builder.
template <typename Builder>
void AddLatencies(Builder* builder, const EncodedLatencies& encoded) {
  builder->add_wakeup_latency(encoded.wakeup);
  builder->add_handler_time(encoded.handler);
  if (!encoded.wakeup_histogram.IsNull()) {
    builder->add_wakeup_latency_histogram(encoded.wakeup_histogram);
    builder->add_handler_time_histogram(encoded.handler_histogram);
  }
}

// Every path of a watcher or fetcher, with histograms only if asked.
Offset<flatbuffers::Vector<Offset<Path>>> EncodePaths(
    flatbuffers::FlatBufferBuilder* fbb, const PathTimings& paths,
    bool histograms) {
  std::array<Offset<Path>, kMaxPathsPerEntry> offsets;
  size_t count = 0;
  for (const PathTiming& path : paths) {
    const auto age = path.age.statistic().Encode(fbb);
    Offset<Histogram> age_histogram;
    if (histograms) age_histogram = path.age.histogram().Encode(fbb);
    Path::Builder builder(*fbb);
    builder.add_origin_id(path.origin_id);
    builder.add_hops(path.hops);
    builder.add_age(age);
    if (histograms) builder.add_age_histogram(age_histogram);
    builder.add_deadline_ns(paths.deadline_ns());
    builder.add_deadline_overruns(Clamp32(path.deadline_overruns));
    builder.add_max_uncertainty_ns(path.max_uncertainty_ns);
    builder.add_count(Clamp32(path.count()));
    offsets[count++] = builder.Finish();
  }
  return fbb->CreateVector(offsets.data(), count);
}

size_t PathsSizeBound(const PathTimings& paths, bool histograms) {
  size_t bound = 4 + 8;  // The vector's length and padding.
  for (const PathTiming& path : paths) {
    bound += 4 + kTableOverhead + 8 * kFieldBound + kStatisticBound;
    if (histograms) bound += HistogramBound(path.age.histogram());
  }
  return bound;
}

}  // namespace

Offset<Timer> EncodeTimer(flatbuffers::FlatBufferBuilder* fbb,
                          const TimerTiming& timing, bool histograms) {
  const auto name = fbb->CreateString(timing.name);
  const EncodedLatencies latencies = EncodeLatencies(
      fbb, timing.wakeup_latency, timing.handler_time, histograms);
  Timer::Builder builder(*fbb);
  builder.add_name(name);
  builder.add_count(Clamp32(timing.count));
  AddLatencies(&builder, latencies);
  builder.add_missed_cycles(Clamp32(timing.missed_cycles));
  builder.add_origin_id(timing.origin_id);
  return builder.Finish();
}

Offset<Watcher> EncodeWatcher(flatbuffers::FlatBufferBuilder* fbb,
                              const WatcherTiming& timing, bool histograms) {
  const EncodedLatencies latencies = EncodeLatencies(
      fbb, timing.wakeup_latency, timing.handler_time, histograms);
  const auto paths = EncodePaths(fbb, timing.paths, histograms);
  Watcher::Builder builder(*fbb);
  builder.add_channel_index(timing.channel_index);
  builder.add_count(Clamp32(timing.count));
  AddLatencies(&builder, latencies);
  builder.add_lost_messages(Clamp32(timing.lost_messages));
  builder.add_paths(paths);
  builder.add_dropped_path_samples(Clamp32(timing.paths.dropped_samples()));
  builder.add_invalid_origins(Clamp32(timing.paths.invalid_origins()));
  return builder.Finish();
}

Offset<Fetcher> EncodeFetcher(flatbuffers::FlatBufferBuilder* fbb,
                              const FetcherTiming& timing, bool histograms) {
  const auto latency = timing.latency.statistic().Encode(fbb);
  Offset<Histogram> latency_histogram;
  if (histograms) latency_histogram = timing.latency.histogram().Encode(fbb);
  const auto paths = EncodePaths(fbb, timing.paths, histograms);
  Fetcher::Builder builder(*fbb);
  builder.add_channel_index(timing.channel_index);
  builder.add_count(Clamp32(timing.count));
  builder.add_latency(latency);
  if (histograms) builder.add_latency_histogram(latency_histogram);
  builder.add_lost_messages(Clamp32(timing.lost_messages));
  builder.add_paths(paths);
  builder.add_dropped_path_samples(Clamp32(timing.paths.dropped_samples()));
  builder.add_invalid_origins(Clamp32(timing.paths.invalid_origins()));
  return builder.Finish();
}

Offset<Sender> EncodeSender(flatbuffers::FlatBufferBuilder* fbb,
                            const SenderTiming& timing) {
  const auto size = timing.size.Encode(fbb);
  std::array<Offset<SendErrorCount>, kSendErrorCount> errors;
  for (size_t i = 0; i < errors.size(); ++i) {
    errors[i] = CreateSendErrorCount(*fbb, static_cast<SendError>(i),
                                     Clamp32(timing.error_counts[i]));
  }
  const auto error_counts = fbb->CreateVector(errors.data(), errors.size());
  std::array<Offset<SentOrigin>, 2 * kMaxPathOrigins> origins;
  size_t origin_count = 0;
  for (const SentOriginCount& sent : timing.sent_origins) {
    origins[origin_count++] =
        CreateSentOrigin(*fbb, sent.origin_id, sent.hops, Clamp32(sent.count));
  }
  const auto sent_origins = fbb->CreateVector(origins.data(), origin_count);
  Sender::Builder builder(*fbb);
  builder.add_channel_index(timing.channel_index);
  builder.add_count(Clamp32(timing.count));
  builder.add_size(size);
  builder.add_error_counts(error_counts);
  builder.add_refused_wakeups(Clamp32(timing.refused_wakeups));
  builder.add_impossible_sent_times(Clamp32(timing.impossible_sent_times));
  builder.add_sent_origins(sent_origins);
  builder.add_dropped_origins(Clamp32(timing.sent_origins.dropped()));
  return builder.Finish();
}

Offset<Report> EncodeReport(flatbuffers::FlatBufferBuilder* fbb,
                            const ReportHeader& header,
                            const EncodedEntries& entries) {
  const auto name = fbb->CreateString(header.name);
  const auto version = fbb->CreateString(header.version);
  const auto node = fbb->CreateString(header.node);
  const auto cpus = fbb->CreateString(header.cpu_latency_limit_cpus);
  const auto idle_poll_cpus = header.idle_poll_cpus.empty()
                                  ? flatbuffers::Offset<flatbuffers::String>()
                                  : fbb->CreateString(header.idle_poll_cpus);
  Report::Builder report(*fbb);
  report.add_name(name);
  report.add_pid(header.pid);
  report.add_version(version);
  report.add_node(node);
  report.add_watchers(entries.watchers);
  report.add_senders(entries.senders);
  report.add_fetchers(entries.fetchers);
  report.add_timers(entries.timers);
  report.add_phased_loops(entries.phased_loops);
  report.add_send_failures(header.send_failures);
  report.add_monotonic_start_time(header.monotonic_start_ns);
  report.add_monotonic_end_time(header.monotonic_end_ns);
  report.add_realtime_start_time(header.realtime_start_ns);
  report.add_dropped_histograms(Clamp32(header.dropped_histograms));
  report.add_dropped_entries(Clamp32(header.dropped_entries));
  report.add_cpu_latency_limit_us(header.cpu_latency_limit_us);
  report.add_cpu_latency_limit_cpus(cpus);
  report.add_reopened_queue_files(Clamp32(header.reopened_queue_files));
  report.add_busy_poll_us(header.busy_poll_us);
  report.add_busy_poll_time(header.busy_poll_ns);
  report.add_busy_poll_wakeups(Clamp32(header.busy_poll_wakeups));
  if (!header.idle_poll_cpus.empty()) {
    report.add_idle_poll_cpus(idle_poll_cpus);
  }
  report.add_timer_anticipation_lead(header.timer_anticipation_lead_ns);
  report.add_timer_anticipation_auto(header.timer_anticipation_auto);
  report.add_timer_anticipation_time(header.timer_anticipation_ns);
  report.add_timer_wakeups(Clamp32(header.timer_wakeups));
  report.add_timer_wakeups_early(Clamp32(header.timer_wakeups_early));
  return report.Finish();
}

Offset<Report> EncodeReportContents(flatbuffers::FlatBufferBuilder* fbb,
                                    const ReportContents& contents) {
  auto has_samples = [](const LatencyRecorder& latency) {
    return latency.histogram().count() > 0;
  };
  auto paths_have_samples = [&](const PathTimings& paths) {
    return std::any_of(paths.begin(), paths.end(), [&](const PathTiming& path) {
      return has_samples(path.age);
    });
  };
  std::vector<Offset<Watcher>> watchers;
  for (const WatcherTiming& entry : contents.watchers) {
    watchers.push_back(EncodeWatcher(fbb, entry,
                                     has_samples(entry.wakeup_latency) ||
                                         has_samples(entry.handler_time) ||
                                         paths_have_samples(entry.paths)));
  }
  std::vector<Offset<Sender>> senders;
  for (const SenderTiming& entry : contents.senders) {
    senders.push_back(EncodeSender(fbb, entry));
  }
  std::vector<Offset<Fetcher>> fetchers;
  for (const FetcherTiming& entry : contents.fetchers) {
    fetchers.push_back(EncodeFetcher(
        fbb, entry,
        has_samples(entry.latency) || paths_have_samples(entry.paths)));
  }
  auto timers = [&](const std::vector<TimerTiming>& entries) {
    std::vector<Offset<Timer>> offsets;
    for (const TimerTiming& entry : entries) {
      offsets.push_back(EncodeTimer(fbb, entry,
                                    has_samples(entry.wakeup_latency) ||
                                        has_samples(entry.handler_time)));
    }
    return fbb->CreateVector(offsets);
  };
  EncodedEntries encoded;
  encoded.timers = timers(contents.timers);
  encoded.phased_loops = timers(contents.phased_loops);
  encoded.watchers = fbb->CreateVector(watchers);
  encoded.senders = fbb->CreateVector(senders);
  encoded.fetchers = fbb->CreateVector(fetchers);
  return EncodeReport(fbb, contents.header, encoded);
}

flatbuffers::DetachedBuffer EncodeReportContents(
    const ReportContents& contents) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  fbb.Finish(EncodeReportContents(&fbb, contents));
  return fbb.Release();
}

size_t TimerSizeBound(const TimerTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 8 * kFieldBound +
                 StringBound(timing.name.size()) + 2 * kStatisticBound;
  if (histograms) {
    bound += HistogramBound(timing.wakeup_latency.histogram()) +
             HistogramBound(timing.handler_time.histogram());
  }
  return bound;
}

size_t WatcherSizeBound(const WatcherTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 10 * kFieldBound + 2 * kStatisticBound +
                 PathsSizeBound(timing.paths, histograms);
  if (histograms) {
    bound += HistogramBound(timing.wakeup_latency.histogram()) +
             HistogramBound(timing.handler_time.histogram());
  }
  return bound;
}

size_t FetcherSizeBound(const FetcherTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 8 * kFieldBound + kStatisticBound +
                 PathsSizeBound(timing.paths, histograms);
  if (histograms) bound += HistogramBound(timing.latency.histogram());
  return bound;
}

size_t SenderSizeBound() {
  constexpr size_t kErrorCountBound = kTableOverhead + 2 * kFieldBound + 4;
  constexpr size_t kSentOriginBound = kTableOverhead + 3 * kFieldBound + 4;
  return kTableOverhead + 8 * kFieldBound + kStatisticBound + 4 + 8 +
         kSendErrorCount * kErrorCountBound + 4 + 8 +
         2 * kMaxPathOrigins * kSentOriginBound;
}

size_t ReportHeaderSizeBound(const ReportHeader& header) {
  // The report table itself: 27 fields (one spare), the five entry vectors'
  // length words and padding, and the strings.
  return kTableOverhead + 28 * kFieldBound + 5 * (4 + 8) + 8 +
         StringBound(header.name.size()) + StringBound(header.version.size()) +
         StringBound(header.node.size()) +
         StringBound(header.cpu_latency_limit_cpus.size()) +
         StringBound(header.idle_poll_cpus.size());
}

namespace {

std::string Str(const flatbuffers::String* text) {
  return text == nullptr ? std::string() : text->str();
}

// Reads one latency: the statistic over `count` samples and, if present,
// the histogram. Returns false with *error naming `where` if the histogram
// does not decode.
bool DecodeLatency(const Statistic* statistic, const Histogram* histogram,
                   uint64_t count, std::string_view where,
                   LatencyRecorder* latency, std::string* error) {
  // A statistic with no samples (NaN) adds nothing, even if the entry's
  // count says calls happened (a handler time is recorded after the report
  // of its call was built).
  if (statistic != nullptr && !std::isnan(statistic->average())) {
    *latency->mutable_statistic() = RunningStatistic::Decode(*statistic, count);
  }
  if (histogram == nullptr) return true;
  std::string why;
  if (!LatencyHistogram::Decode(*histogram, latency->mutable_histogram(),
                                &why)) {
    *error = StrCat(where, ": ", why);
    return false;
  }
  return true;
}

// Reads a watcher's or fetcher's paths into *out.
bool DecodePaths(const flatbuffers::Vector<Offset<Path>>* paths,
                 uint32_t dropped_samples, uint32_t invalid_origins,
                 std::string_view where, PathTimings* out, std::string* error) {
  out->AddDecodedCounts(dropped_samples, invalid_origins);
  if (paths == nullptr) return true;
  for (const Path* path : *paths) {
    PathTiming timing;
    timing.origin_id = path->origin_id();
    timing.hops = path->hops();
    timing.deadline_overruns = path->deadline_overruns();
    timing.max_uncertainty_ns = path->max_uncertainty_ns();
    if (!DecodeLatency(path->age(), path->age_histogram(), path->count(),
                       StrCat(where, ": path from origin ", path->origin_id()),
                       &timing.age, error)) {
      return false;
    }
    if (path->deadline_ns() > 0) out->set_deadline_ns(path->deadline_ns());
    out->AddDecoded(timing);
  }
  return true;
}

bool DecodeTimers(const flatbuffers::Vector<Offset<Timer>>* timers,
                  std::string_view kind, std::vector<TimerTiming>* out,
                  std::string* error) {
  if (timers == nullptr) return true;
  for (const Timer* timer : *timers) {
    TimerTiming& entry = out->emplace_back();
    entry.name = Str(timer->name());
    entry.count = timer->count();
    entry.missed_cycles = timer->missed_cycles();
    entry.origin_id = timer->origin_id();
    const std::string where = StrCat(kind, " ", entry.name);
    if (!DecodeLatency(timer->wakeup_latency(),
                       timer->wakeup_latency_histogram(), entry.count, where,
                       &entry.wakeup_latency, error) ||
        !DecodeLatency(timer->handler_time(), timer->handler_time_histogram(),
                       entry.count, where, &entry.handler_time, error)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<ReportContents> DecodeTimingReport(const Report& report) {
  if (report.name() == nullptr) {
    return absl::InvalidArgumentError("timing report without a name");
  }
  ReportContents contents;
  ReportHeader& header = contents.header;
  header.name = report.name()->str();
  header.pid = report.pid();
  header.version = Str(report.version());
  header.node = Str(report.node());
  header.monotonic_start_ns = report.monotonic_start_time();
  header.monotonic_end_ns = report.monotonic_end_time();
  int64_t window_ns = 0;
  if (__builtin_sub_overflow(header.monotonic_end_ns, header.monotonic_start_ns,
                             &window_ns) ||
      window_ns < 0) {
    return absl::InvalidArgumentError(
        StrCat("timing report of ", header.name, ": its window ends (",
               header.monotonic_end_ns, " ns) before it starts (",
               header.monotonic_start_ns, " ns) or is impossibly long"));
  }
  header.realtime_start_ns = report.realtime_start_time();
  header.send_failures = report.send_failures();
  header.dropped_histograms = report.dropped_histograms();
  header.dropped_entries = report.dropped_entries();
  header.reopened_queue_files = report.reopened_queue_files();
  header.cpu_latency_limit_us = report.cpu_latency_limit_us();
  header.cpu_latency_limit_cpus = Str(report.cpu_latency_limit_cpus());
  header.busy_poll_us = report.busy_poll_us();
  header.busy_poll_ns = report.busy_poll_time();
  header.busy_poll_wakeups = report.busy_poll_wakeups();
  header.idle_poll_cpus = Str(report.idle_poll_cpus());
  header.timer_anticipation_lead_ns = report.timer_anticipation_lead();
  header.timer_anticipation_auto = report.timer_anticipation_auto();
  header.timer_anticipation_ns = report.timer_anticipation_time();
  header.timer_wakeups = report.timer_wakeups();
  header.timer_wakeups_early = report.timer_wakeups_early();

  std::string error;
  auto failed = [&]() {
    return absl::InvalidArgumentError(
        StrCat("timing report of ", header.name, ": ", error));
  };
  if (!DecodeTimers(report.timers(), "timer", &contents.timers, &error) ||
      !DecodeTimers(report.phased_loops(), "phased loop",
                    &contents.phased_loops, &error)) {
    return failed();
  }
  if (report.watchers() != nullptr) {
    for (const Watcher* watcher : *report.watchers()) {
      WatcherTiming& entry = contents.watchers.emplace_back();
      entry.channel_index = watcher->channel_index();
      entry.count = watcher->count();
      entry.lost_messages = watcher->lost_messages();
      const std::string where =
          StrCat("watcher of channel ", entry.channel_index);
      if (!DecodeLatency(watcher->wakeup_latency(),
                         watcher->wakeup_latency_histogram(), entry.count,
                         where, &entry.wakeup_latency, &error) ||
          !DecodeLatency(watcher->handler_time(),
                         watcher->handler_time_histogram(), entry.count, where,
                         &entry.handler_time, &error) ||
          !DecodePaths(watcher->paths(), watcher->dropped_path_samples(),
                       watcher->invalid_origins(), where, &entry.paths,
                       &error)) {
        return failed();
      }
    }
  }
  if (report.fetchers() != nullptr) {
    for (const Fetcher* fetcher : *report.fetchers()) {
      FetcherTiming& entry = contents.fetchers.emplace_back();
      entry.channel_index = fetcher->channel_index();
      entry.count = fetcher->count();
      entry.lost_messages = fetcher->lost_messages();
      const std::string where =
          StrCat("fetcher of channel ", entry.channel_index);
      if (!DecodeLatency(fetcher->latency(), fetcher->latency_histogram(),
                         entry.count, where, &entry.latency, &error) ||
          !DecodePaths(fetcher->paths(), fetcher->dropped_path_samples(),
                       fetcher->invalid_origins(), where, &entry.paths,
                       &error)) {
        return failed();
      }
    }
  }
  if (report.senders() != nullptr) {
    for (const Sender* sender : *report.senders()) {
      SenderTiming& entry = contents.senders.emplace_back();
      entry.channel_index = sender->channel_index();
      entry.count = sender->count();
      entry.refused_wakeups = sender->refused_wakeups();
      entry.impossible_sent_times = sender->impossible_sent_times();
      entry.sent_origins.AddDropped(sender->dropped_origins());
      if (sender->sent_origins() != nullptr) {
        for (const SentOrigin* sent : *sender->sent_origins()) {
          entry.sent_origins.AddDecoded(timing::SentOriginCount{
              sent->origin_id(), sent->hops(), sent->count()});
        }
      }
      if (sender->size() != nullptr && entry.count > 0 &&
          !std::isnan(sender->size()->average())) {
        entry.size = RunningStatistic::Decode(*sender->size(), entry.count);
      }
      if (sender->error_counts() == nullptr) continue;
      for (const SendErrorCount* counted : *sender->error_counts()) {
        const size_t index = static_cast<size_t>(counted->error());
        if (index < kSendErrorCount)
          entry.error_counts[index] += counted->count();
      }
    }
  }
  return contents;
}

absl::StatusOr<ReportContents> DecodeTimingReport(
    std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!verifier.VerifyBuffer<Report>(nullptr)) {
    return absl::InvalidArgumentError(
        StrCat("not a valid aos.timing.Report (", bytes.size(),
               " bytes fail the flatbuffers verifier)"));
  }
  return DecodeTimingReport(*flatbuffers::GetRoot<Report>(bytes.data()));
}

namespace {

const reflection::Object* FindObject(const reflection::Schema& schema,
                                     std::string_view name) {
  if (schema.objects() == nullptr) return nullptr;
  for (const reflection::Object* object : *schema.objects()) {
    if (object->name() != nullptr && object->name()->string_view() == name) {
      return object;
    }
  }
  return nullptr;
}

}  // namespace

absl::Status CheckTimingReportSchema(const reflection::Schema& schema) {
  const reflection::Schema& ours =
      *reflection::GetSchema(ReportBinarySchema::data());
  for (const reflection::Object* object : *ours.objects()) {
    const std::string_view table = object->name()->string_view();
    const reflection::Object* theirs = FindObject(schema, table);
    if (theirs == nullptr) {
      if (table == "aos.timing.ChannelNotFilledIn") continue;
      return absl::FailedPreconditionError(
          StrCat("its schema has no table ", table));
    }
    for (const reflection::Field* field : *object->fields()) {
      if (field->deprecated()) continue;
      const std::string_view name = field->name()->string_view();
      const reflection::Field* other =
          theirs->fields() == nullptr
              ? nullptr
              : theirs->fields()->LookupByKey(field->name()->c_str());
      if (other == nullptr) continue;  // An older writer: left at default.
      if (other->id() != field->id() ||
          other->type()->base_type() != field->type()->base_type() ||
          other->type()->element() != field->type()->element()) {
        return absl::FailedPreconditionError(StrCat(
            "its ", table, ".", name, " is field ", other->id(), " of type ",
            reflection::EnumNameBaseType(other->type()->base_type()),
            " where this build reads field ", field->id(), " of type ",
            reflection::EnumNameBaseType(field->type()->base_type()),
            ": it was written by an aos build whose report layout "
            "differs (before 2026-11-24, when the ids became AOS's)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace aos::timing
