#ifndef AOS_EVENTS_TIMING_REPORT_CODEC_H_
#define AOS_EVENTS_TIMING_REPORT_CODEC_H_

// The wire form of timing reports: the entry model (timing_entry.h) encoded
// into an aos.timing.Report, upper bounds of its size, and a received report
// validated and decoded back into the model. The one encoder and decoder:
// the loop's reporter, the accumulator and the tools all use these.
//
//   // A tool, receiving:
//   absl::StatusOr<timing::ReportContents> report = DecodeTimingReport(bytes);
//   if (!report.ok()) ... report.status().message() says what is wrong ...
//   // Sending or printing a summary:
//   flatbuffers::DetachedBuffer buffer = EncodeReportContents(*report);
//
// Encoding allocates only through the FlatBufferBuilder it is given (the
// reporter gives it a fixed buffer); decoding allocates freely (tools).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/timing_entry.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/reflection_generated.h"

namespace aos::timing {

// Who a report is about and which window it covers (the fields of
// aos.timing.Report other than its entries; docs/timing_reports.md).
struct ReportHeader {
  std::string name;
  int pid = 0;
  std::string version;
  std::string node;
  int64_t monotonic_start_ns = 0;
  int64_t monotonic_end_ns = 0;
  int64_t realtime_start_ns = 0;
  // The window's length in ns, computed without integer overflow (a summary
  // of many reports may span any two of them).
  double window_ns() const {
    return static_cast<double>(monotonic_end_ns) -
           static_cast<double>(monotonic_start_ns);
  }
  uint64_t send_failures = 0;
  uint64_t dropped_histograms = 0;
  uint64_t dropped_entries = 0;
  uint64_t reopened_queue_files = 0;
  int32_t cpu_latency_limit_us = -1;
  std::string cpu_latency_limit_cpus;
  int32_t busy_poll_us = 0;
  uint64_t busy_poll_ns = 0;
  uint64_t busy_poll_wakeups = 0;
  std::string idle_poll_cpus;
  int64_t timer_anticipation_lead_ns = 0;
  bool timer_anticipation_auto = false;
  uint64_t timer_anticipation_ns = 0;
  uint64_t timer_wakeups = 0;
  uint64_t timer_wakeups_early = 0;
};

// A whole report as values: what a received report decodes to, and what the
// accumulator sums windows into. Entries are in report order.
struct ReportContents {
  ReportHeader header;
  std::vector<WatcherTiming> watchers;
  std::vector<SenderTiming> senders;
  std::vector<FetcherTiming> fetchers;
  std::vector<TimerTiming> timers;
  std::vector<TimerTiming> phased_loops;
};

// --- Encoding ---------------------------------------------------------------
// Each writes one table into `fbb`, where no table or vector may be under
// construction, and returns its offset. `fbb` must force defaults
// (ForceDefaults(true)): a count of 0 is a figure too. Latencies carry their
// histograms only if `histograms`. Counts above UINT32_MAX are written as
// UINT32_MAX.

flatbuffers::Offset<Timer> EncodeTimer(flatbuffers::FlatBufferBuilder* fbb,
                                       const TimerTiming& timing,
                                       bool histograms);
flatbuffers::Offset<Watcher> EncodeWatcher(flatbuffers::FlatBufferBuilder* fbb,
                                           const WatcherTiming& timing,
                                           bool histograms);
flatbuffers::Offset<Fetcher> EncodeFetcher(flatbuffers::FlatBufferBuilder* fbb,
                                           const FetcherTiming& timing,
                                           bool histograms);
// Every SendError counter, zero or not.
flatbuffers::Offset<Sender> EncodeSender(flatbuffers::FlatBufferBuilder* fbb,
                                         const SenderTiming& timing);

// The entry vectors of a report, already in `fbb`.
struct EncodedEntries {
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Watcher>>>
      watchers;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Sender>>> senders;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Fetcher>>>
      fetchers;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Timer>>> timers;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Timer>>>
      phased_loops;
};

// The report table: `header` and `entries`.
flatbuffers::Offset<Report> EncodeReport(flatbuffers::FlatBufferBuilder* fbb,
                                         const ReportHeader& header,
                                         const EncodedEntries& entries);

// `contents` as a report table in `fbb` (which forces defaults, as above).
// Latencies carry their histogram when it holds samples. Allocates.
flatbuffers::Offset<Report> EncodeReportContents(
    flatbuffers::FlatBufferBuilder* fbb, const ReportContents& contents);
// ... as a finished aos.timing.Report.
flatbuffers::DetachedBuffer EncodeReportContents(
    const ReportContents& contents);

// --- Size bounds
// -------------------------------------------------------------- Upper bounds
// of the bytes each encoder adds to a builder, including the offset that points
// at the table, vtables (never counted as shared) and alignment padding. For
// the reporter, which must plan what fits in max_size before it builds.

size_t TimerSizeBound(const TimerTiming& timing, bool histograms);
size_t WatcherSizeBound(const WatcherTiming& timing, bool histograms);
size_t FetcherSizeBound(const FetcherTiming& timing, bool histograms);
size_t SenderSizeBound();
// The report table with empty entry vectors, for these header strings.
size_t ReportHeaderSizeBound(const ReportHeader& header);

// --- Decoding ---------------------------------------------------------------

// Validates `bytes` as an aos.timing.Report (the flatbuffers verifier, a
// name, a window that ends no earlier than it starts and whose length is
// an int64_t of ns, histograms that decode: known layout, sane buckets) and
// returns its contents. The error is one sentence naming what is wrong ("timing
// report of ping: timer ping: histogram bucket 3: ..."). A statistic whose
// average is NaN (a window with calls but no sample yet) decodes as empty.
// Sender error kinds this version does not know are ignored. Allocates.
absl::StatusOr<ReportContents> DecodeTimingReport(
    std::span<const uint8_t> bytes);
// The same for a report that is part of an already verified buffer (e.g. a
// StreamedReport line).
absl::StatusOr<ReportContents> DecodeTimingReport(const Report& report);

// Whether reports written with `schema` (an aos.timing.Report schema as a
// log or a config embeds it) decode with this build: every table and field
// this build reads has the same id and type there. A report written with
// another layout would decode without error into wrong figures (aos builds
// before 2026-11-24 numbered the fields differently from AOS), so a reader
// checks a log's schema once, before decoding its reports. The error says
// which field differs. Fields `schema` has and this build does not are
// fine (a newer writer). Allocates.
absl::Status CheckTimingReportSchema(const reflection::Schema& schema);

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_REPORT_CODEC_H_
