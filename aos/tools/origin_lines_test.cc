// aos_dump -v's origin lines: ids in hex, names from timing reports
// (escaped), ages at the message's send time with their uncertainty.
#include "aos/tools/origin_lines.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

Context MessageSentAt(int64_t sent_ns) {
  Context context;
  context.monotonic_event_time =
      monotonic_clock::time_point(std::chrono::nanoseconds(sent_ns));
  return context;
}

timing::ReportContents Report(std::string_view name, std::string_view node) {
  timing::ReportContents report;
  report.header.name = name;
  report.header.node = node;
  return report;
}

timing::TimerTiming Timer(std::string_view name, uint32_t origin_id) {
  timing::TimerTiming timer;
  timer.name = name;
  timer.origin_id = origin_id;
  return timer;
}

TEST(OriginLinesTest, OneLinePerOriginWithItsAgeAndUncertainty) {
  Context context = MessageSentAt(2'010'268'123);
  context.origins.Add(
      {.id = 0x6b2f3a10, .hops = 1, .monotonic_time_ns = 2'000'000'000});
  context.origins.Add({.id = 0x5,
                       .hops = 3,
                       .uncertainty_us = 40,
                       .monotonic_time_ns = 2'010'268'123});
  OriginNames names;
  timing::ReportContents report = Report("ping", "");
  report.timers.push_back(Timer("ping", 0x6b2f3a10));
  names.AddReport(report);
  EXPECT_EQ(OriginLines(context, "", names),
            "  origin 0x6b2f3a10 (timer ping of ping): hops 1, time "
            "2.000000000sec, age 10268.123 us ±0 us\n"
            "  origin 0x00000005: hops 3, time 2.010268123sec, age 0.000 us "
            "±40 us\n");
}

TEST(OriginLinesTest, NoneDroppedAndUnknownAreSaid) {
  OriginNames names;
  EXPECT_EQ(OriginLines(MessageSentAt(5), "", names), "  no origins\n");
  EXPECT_EQ(OriginLines(MessageSentAt(5), "damaged", names),
            "  origins unknown (damaged)\n");
  PathOrigins::Raw raw{};
  raw.dropped = 2;
  Context context = MessageSentAt(5);
  context.origins = PathOrigins::FromRaw(raw, 5, nullptr);
  EXPECT_EQ(OriginLines(context, "", names),
            "  2 more origins dropped on the way (no room)\n");
}

// An origin later than its message (uncertainty allows it) has a negative
// age, however small.
TEST(OriginLinesTest, ANegativeAgeKeepsItsSign) {
  Context context = MessageSentAt(1'000'000);
  context.origins.Add({.id = 1,
                       .hops = 1,
                       .uncertainty_us = 10,
                       .monotonic_time_ns = 1'000'500});
  EXPECT_EQ(OriginLines(context, "", OriginNames()),
            "  origin 0x00000001: hops 1, time 0.001000500sec, age -0.500 us "
            "±10 us\n");
}

// Phased loops, nodes, reports without origin ids (the id the loop would
// use), the first name of an id kept, and names escaped: a log's writer
// controls them.
TEST(OriginLinesTest, NamesFromReports) {
  OriginNames names;
  timing::ReportContents report = Report("aos_logger", "pi2");
  report.phased_loops.push_back(Timer("poll", 0));
  report.timers.push_back(Timer("evil\x1b[2J", 7));
  names.AddReport(report);
  timing::ReportContents other = Report("other", "");
  other.timers.push_back(Timer("second", 7));
  names.AddReport(other);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(
      names.Describe(PathOriginId("pi2", "aos_logger", "phased_loop", "poll")),
      "phased loop poll of aos_logger on pi2");
  EXPECT_EQ(names.Describe(7), "timer \"evil\\x1b[2J\" of aos_logger on pi2");
  EXPECT_EQ(names.Describe(8), "");
}

}  // namespace
}  // namespace aos
