// The scale section's planning, flags, goals, table and JSON, on made-up
// figures: nothing here runs or times anything.
#include "tools/bench/scale_section.h"

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "aos/util/json_document.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Names(const std::vector<ScaleLoad>& loads) {
  std::vector<std::string> names;
  for (const ScaleLoad& load : loads) names.push_back(load.Name());
  return names;
}

TEST(ScaleLoadTest, NamesRatesAndWakeups) {
  const ScaleLoad one{.timers = 1, .interval_us = 10000};
  EXPECT_EQ(one.Name(), "1 timer, 100 Hz");
  const ScaleLoad aligned{.timers = 100, .interval_us = 1000};
  EXPECT_EQ(aligned.Name(), "100 timers, 1 kHz, aligned");
  EXPECT_EQ(aligned.CallsPerSecond(), 100000);
  EXPECT_EQ(aligned.LoopWakeupsPerSecond(), 1000) << "one wakeup runs all";
  const ScaleLoad spread{.timers = 100, .interval_us = 1000, .aligned = false};
  EXPECT_EQ(spread.Name(), "100 timers, 1 kHz, spread");
  EXPECT_EQ(spread.Phases(), "spread");
  EXPECT_EQ(spread.LoopWakeupsPerSecond(), 100000) << "one wakeup each";
  const ScaleLoad watchers{.watchers = 16, .interval_us = 1000};
  EXPECT_EQ(watchers.Name(), "16 watcher processes, 1 kHz");
  EXPECT_EQ(watchers.Count(), 16);
  EXPECT_EQ(watchers.LoopWakeupsPerSecond(), 16000) << "each process wakes";
  EXPECT_EQ((ScaleLoad{.watchers = 1}).Name(), "1 watcher process, 1 kHz");
  EXPECT_EQ((ScaleLoad{.timers = 1, .interval_us = 3000}).Rate(), "333.3 Hz");
  EXPECT_EQ((ScaleLoad{.timers = 1, .interval_us = 500}).Rate(), "2 kHz");
}

TEST(ParseCountsTest, ReadsCommaSeparatedCountsInTheirOrder) {
  auto counts = ParseCounts("--scale_timers", "1,10,100,1000", 1000);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_THAT(*counts, ElementsAre(1, 10, 100, 1000));
  counts = ParseCounts("--scale_timers", "16,4,16", 1000);
  ASSERT_TRUE(counts.ok());
  EXPECT_THAT(*counts, ElementsAre(16, 4)) << "repeats dropped";
}

TEST(ParseCountsTest, AnythingElseIsNamedWithTheFlag) {
  for (const auto& [value, named] :
       std::vector<std::pair<std::string, std::string>>{
           {"", "--scale_watchers= is empty"},
           {"1,,4", "'' is not a whole number from 1 to 64"},
           {"0", "'0' is not a whole number from 1 to 64"},
           {"65", "'65' is not"},
           {"4x", "'4x' is not"},
           {"1.5", "'1.5' is not"},
           {" 1", "' 1' is not"},
           {"-4", "'-4' is not"},
           {"4,", "'' is not"}}) {
    auto counts = ParseCounts("--scale_watchers", value, 64);
    ASSERT_FALSE(counts.ok()) << value;
    EXPECT_THAT(counts.status().message(), HasSubstr("--scale_watchers="))
        << value;
    EXPECT_THAT(counts.status().message(), HasSubstr(named)) << value;
  }
}

TEST(ScaleOptionsFromFlagsTest, DefaultsAndRunLengths) {
  auto options = ScaleOptionsFromFlags({});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_THAT(options->timers, ElementsAre(1, 10, 100, 1000));
  EXPECT_THAT(options->watchers, ElementsAre(1, 4, 16, 64));
  EXPECT_THAT(options->timer_intervals_us, ElementsAre(1000, 10000));
  EXPECT_EQ(options->seconds, 3);
  EXPECT_EQ(options->max_wakeups_per_s, 100000) << "2 CPUs";
  options = ScaleOptionsFromFlags({.long_run = true, .cpus = 8});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->seconds, 15);
  EXPECT_EQ(options->max_wakeups_per_s, 400000);
  options = ScaleOptionsFromFlags({.seconds = 1.5, .long_run = true});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->seconds, 1.5) << "given beats --long_run";
  options = ScaleOptionsFromFlags({.timers = "100", .watchers = "2,8"});
  ASSERT_TRUE(options.ok());
  EXPECT_THAT(options->timers, ElementsAre(100));
  EXPECT_THAT(options->watchers, ElementsAre(2, 8));
}

TEST(ScaleOptionsFromFlagsTest, ContradictionsAndBadValuesAreNamed) {
  auto both =
      ScaleOptionsFromFlags({.scale_only = true, .main_job_only = true});
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(),
              HasSubstr("--scale_only=true cannot go with --main_job_only"));
  auto off = ScaleOptionsFromFlags({.scale = false, .scale_only = true});
  ASSERT_FALSE(off.ok());
  EXPECT_THAT(off.status().message(), HasSubstr("--noscale"));
  EXPECT_TRUE(ScaleOptionsFromFlags({.scale = false}).ok());
  auto timers = ScaleOptionsFromFlags({.timers = "1,2000"});
  ASSERT_FALSE(timers.ok());
  EXPECT_THAT(timers.status().message(),
              HasSubstr("--scale_timers=1,2000: '2000' is not"));
  auto watchers = ScaleOptionsFromFlags({.watchers = "a"});
  ASSERT_FALSE(watchers.ok());
  EXPECT_THAT(watchers.status().message(), HasSubstr("--scale_watchers=a"));
  for (double seconds : {-1.0, 0.1, 4000.0, double{NAN}}) {
    auto bad = ScaleOptionsFromFlags({.seconds = seconds});
    ASSERT_FALSE(bad.ok()) << seconds;
    EXPECT_THAT(bad.status().message(), HasSubstr("--scale_seconds="));
  }
  for (int pairs : {-1, 21}) {
    auto bad = ScaleOptionsFromFlags({.p99_pairs = pairs});
    ASSERT_FALSE(bad.ok()) << pairs;
    EXPECT_THAT(bad.status().message(),
                HasSubstr("--scale_p99_pairs=" + std::to_string(pairs) +
                          " is not 0-20"));
  }
  EXPECT_EQ(ScaleOptionsFromFlags({.p99_pairs = 0})->p99_pairs, 0);
  EXPECT_EQ(ScaleOptionsFromFlags({})->p99_pairs, 2) << "the default";
}

TEST(CheckScaleCapacityTest, TheConfigMustHaveRoomForEveryWatcher) {
  ScaleOptions options;
  EXPECT_TRUE(CheckScaleCapacity(options, 64, 65, "scale_config.json").ok());
  const absl::Status watchers =
      CheckScaleCapacity(options, 16, 80, "scale_config.json");
  ASSERT_FALSE(watchers.ok());
  EXPECT_THAT(watchers.message(),
              HasSubstr("--scale_watchers=1,4,16,64 asks for 64 watcher "
                        "processes on /test aos.examples.Ping, whose "
                        "num_watchers is 16 in scale_config.json"));
  const absl::Status senders =
      CheckScaleCapacity(options, 64, 64, "scale_config.json");
  ASSERT_FALSE(senders.ok());
  EXPECT_THAT(senders.message(), HasSubstr("needs 65 senders on /aos"));
  EXPECT_THAT(senders.message(), HasSubstr("num_senders is 64"));
}

TEST(PlanScaleRowsTest, TheDefaultRowsOnTwoCpus) {
  const ScalePlan plan = PlanScaleRows(*ScaleOptionsFromFlags({.cpus = 2}));
  EXPECT_THAT(
      Names(plan.rows),
      ElementsAre("1 timer, 1 kHz", "10 timers, 1 kHz, aligned",
                  "10 timers, 1 kHz, spread", "100 timers, 1 kHz, aligned",
                  "100 timers, 1 kHz, spread", "1 timer, 100 Hz",
                  "10 timers, 100 Hz, aligned", "10 timers, 100 Hz, spread",
                  "100 timers, 100 Hz, aligned", "100 timers, 100 Hz, spread",
                  "1000 timers, 100 Hz, aligned", "1000 timers, 100 Hz, spread",
                  "1 watcher process, 1 kHz", "4 watcher processes, 1 kHz",
                  "16 watcher processes, 1 kHz",
                  "64 watcher processes, 1 kHz"));
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].what, "1000 timers, 1 kHz (aligned and spread)");
  EXPECT_THAT(plan.skipped[0].why,
              HasSubstr("cyclictest -t 1000 would wake 1000000 threads a "
                        "second, more than the 100000"));
  EXPECT_THAT(plan.skipped[0].why,
              HasSubstr("one loop would have to run 1000000 calls a second"));
}

TEST(PlanScaleRowsTest, TheCapDecidesWhatRuns) {
  ScaleOptions options;
  options.max_wakeups_per_s = 2e6;
  EXPECT_EQ(PlanScaleRows(options).rows.size(), 18u);
  EXPECT_TRUE(PlanScaleRows(options).skipped.empty());
  options.max_wakeups_per_s = 10000;
  options.timers = {100};
  options.watchers = {4, 16};
  const ScalePlan small = PlanScaleRows(options);
  EXPECT_THAT(Names(small.rows), ElementsAre("100 timers, 100 Hz, aligned",
                                             "100 timers, 100 Hz, spread",
                                             "4 watcher processes, 1 kHz"));
  ASSERT_EQ(small.skipped.size(), 2u);
  EXPECT_EQ(small.skipped[1].what, "16 watcher processes, 1 kHz");
  EXPECT_THAT(small.skipped[1].why, Not(HasSubstr("one loop")));
}

TEST(CyclictestScaleArgsTest, ThreadsWakeAsTheTimersDo) {
  EXPECT_THAT(CyclictestScaleArgs({.timers = 100, .interval_us = 1000}, 80),
              ElementsAre("--mlockall", "-p80", "-i1000", "--threads=100",
                          "--aligned=0", "--histogram=10000", "-q"));
  EXPECT_THAT(CyclictestScaleArgs(
                  {.timers = 1000, .interval_us = 10000, .aligned = false}, 5),
              ElementsAre("--mlockall", "-p5", "-i10000", "--threads=1000",
                          "--aligned=10", "--histogram=10000", "-q"))
      << "thread i at 10 us x i, as timer i";
  EXPECT_THAT(CyclictestScaleArgs({.watchers = 64, .interval_us = 1000}, 80),
              ::testing::Contains("--aligned=0"))
      << "one message wakes every watcher";
  EXPECT_THAT(CyclictestScaleArgs(
                  {.timers = 3000, .interval_us = 1000, .aligned = false}, 80),
              ::testing::Contains("--aligned=1"))
      << "never 0 for spread timers";
}

TEST(ScaleFiguresTest, CpuCostAndFloor) {
  EXPECT_DOUBLE_EQ((CpuUse{.cpu_seconds = 0.3, .wall_seconds = 2}).Percent(),
                   15);
  EXPECT_TRUE(
      std::isnan(CpuUse{.cpu_seconds = 1, .wall_seconds = 0}.Percent()));
  ScaleSide side{.cpu_percent = 10, .calls_per_s = 100000};
  EXPECT_DOUBLE_EQ(side.CostPerCallUs(), 1) << "0.1 s a second / 100000";
  EXPECT_TRUE(std::isnan(ScaleSide{.cpu_percent = 10}.CostPerCallUs()));
  ScaleRow row{.load = {.timers = 100, .interval_us = 1000}};
  row.cyclictest = {.cpu_percent = 40, .calls_per_s = 100000};
  // 4 us per thread wakeup, 1000 wakeups a second for timers due together.
  CpuFloor floor = CpuFloorOf(row, {});
  EXPECT_DOUBLE_EQ(floor.percent, 0.4);
  EXPECT_THAT(floor.how, HasSubstr("cyclictest -t 100 in the same row spent "
                                   "4.00 us of CPU per thread wakeup; the "
                                   "row needs 1000 wakeups a second"));
  // With the 1-timer row, its cyclictest -t 1: one thread woken as often
  // as the loop.
  ScaleRow one{.load = {.timers = 1, .interval_us = 1000}};
  one.cyclictest = {.cpu_percent = 1.5, .calls_per_s = 1000};
  floor = CpuFloorOf(row, {one, row});
  EXPECT_DOUBLE_EQ(floor.percent, 1.5);
  EXPECT_THAT(floor.how, HasSubstr("cyclictest -t 1 at 1 kHz beside the "
                                   "1-timer row"));
  EXPECT_DOUBLE_EQ(CpuFloorOf(one, {one, row}).percent, 1.5) << "its own";
  row.load.aligned = false;
  EXPECT_DOUBLE_EQ(CpuFloorOf(row, {one, row}).percent, 40)
      << "a wakeup per timer";
  EXPECT_TRUE(std::isnan(CpuFloorOf(ScaleRow{}, {}).percent));
}

// A measured row with the figures the goals read.
ScaleRow Row(ScaleLoad load, double cpu_percent, double p99_us,
             double cyclictest_cpu_percent) {
  ScaleRow row{.load = load};
  row.ours.cpu_percent = cpu_percent;
  row.ours.calls_per_s = load.CallsPerSecond();
  row.ours.latency.p99_us = p99_us;
  row.cyclictest.cpu_percent = cyclictest_cpu_percent;
  row.cyclictest.calls_per_s = load.CallsPerSecond();
  row.cyclictest.latency.p99_us = 3 * p99_us;
  return row;
}

const ScaleGoal& Goal(const std::vector<ScaleGoal>& goals,
                      std::string_view key) {
  for (const ScaleGoal& goal : goals) {
    if (goal.key == key) return goal;
  }
  ADD_FAILURE() << "no goal " << key;
  return goals.front();
}

TEST(EvaluateScaleGoalsTest, MetMissedAndBelowTheFloor) {
  const std::vector<ScaleRow> rows = {
      Row({.timers = 1, .interval_us = 1000}, 0.5, 20, 0.4),
      Row({.timers = 100, .interval_us = 1000}, 5, 39, 30),
      Row({.timers = 1000, .interval_us = 10000}, 3, 500, 30),
      Row({.timers = 1000, .interval_us = 10000, .aligned = false}, 45, 30,
          40)};
  const std::vector<ScaleGoal> goals = EvaluateScaleGoals(rows);
  ASSERT_EQ(goals.size(), 4u);
  const ScaleGoal& cpu = Goal(goals, "cpu_100_timers_1khz_aligned");
  EXPECT_EQ(cpu.met, true);
  EXPECT_EQ(cpu.value, 5);
  EXPECT_DOUBLE_EQ(cpu.floor, 0.4) << "cyclictest -t 1 of the 1-timer row";
  const ScaleGoal& p99 = Goal(goals, "p99_100_timers_1khz_aligned");
  EXPECT_EQ(p99.met, true) << "39 us <= 2 x 20 us";
  EXPECT_EQ(p99.limit, 40);
  EXPECT_TRUE(std::isnan(p99.floor));
  EXPECT_THAT(p99.note, HasSubstr("99 x 0.50 us of CPU per call"))
      << "no spacing measured: the CPU per call stands in";
  EXPECT_EQ(Goal(goals, "cpu_1000_timers_100hz_aligned").met, true);
  const ScaleGoal& spread = Goal(goals, "cpu_1000_timers_100hz_spread");
  EXPECT_EQ(spread.met, false);
  EXPECT_DOUBLE_EQ(spread.floor, 40);
  EXPECT_TRUE(spread.BelowFloor());
  EXPECT_THAT(spread.floor_text,
              HasSubstr("cyclictest -t 1000 in the same row spent 4.00 us of "
                        "CPU per thread wakeup; the row needs 100000 wakeups "
                        "a second"));
}

// Where the run measured how far apart the calls of a wakeup start, the
// note says that, beside the CPU per call.
TEST(EvaluateScaleGoalsTest, TheP99NoteGivesTheCallSpacingWhereMeasured) {
  std::vector<ScaleRow> rows = {
      Row({.timers = 1, .interval_us = 1000}, 0.5, 20, 0.4),
      Row({.timers = 100, .interval_us = 1000}, 5, 60, 30)};
  rows[1].ours.call_spacing_us = 0.3;
  // Goal() returns a reference into the vector: keep it alive.
  const std::vector<ScaleGoal> goals = EvaluateScaleGoals(rows);
  const ScaleGoal& p99 = Goal(goals, "p99_100_timers_1khz_aligned");
  EXPECT_EQ(p99.met, false);
  EXPECT_THAT(p99.note,
              HasSubstr("99 x 0.30 us a call (the timers' mean wakeup "
                        "latencies) = 29.7 us (0.50 us of CPU per call, the "
                        "wakeup's own work included)"));
}

// Pairs run back to back decide the p99 goal where the bench ran them:
// here the rows (run apart) miss it and the pairs meet it; the note gives
// both, and each pair's p99s.
TEST(EvaluateScaleGoalsTest, ThePairsRunBackToBackDecideTheP99Goal) {
  const std::vector<ScaleRow> rows = {
      Row({.timers = 1, .interval_us = 1000}, 0.5, 20, 0.4),
      Row({.timers = 100, .interval_us = 1000}, 5, 60, 30)};
  TailPairs pairs{
      .pairs = 2, .one_p99_us = {50, 30}, .hundred_p99_us = {90, 70}};
  pairs.one.count = 4000;
  pairs.one.p99_us = 45;
  pairs.hundred.count = 400000;
  pairs.hundred.p99_us = 85;
  const std::vector<ScaleGoal> goals = EvaluateScaleGoals(rows, pairs);
  const ScaleGoal& p99 = Goal(goals, "p99_100_timers_1khz_aligned");
  EXPECT_EQ(p99.met, true) << "85 us <= 2 x 45 us";
  EXPECT_EQ(p99.value, 85);
  EXPECT_EQ(p99.limit, 90);
  EXPECT_THAT(p99.note,
              HasSubstr("judged on 2 pairs of runs back to back (A B B A, 100 "
                        "timers first), each load's runs pooled; p99 of 100 "
                        "timers / 1 timer in each pair, us: 90.0/50.0, "
                        "70.0/30.0 (1 of 2 met); the rows alone, run apart: "
                        "60.0 us against a limit of 40.0 (missed)"));
  EXPECT_THAT(p99.note, HasSubstr("99 x 0.50 us of CPU per call"))
      << "what the calls before the last cost, as without pairs";

  // Pairs that measured nothing (no histograms): the rows decide.
  TailPairs empty;
  empty.pairs = 2;
  const std::vector<ScaleGoal> rows_goals = EvaluateScaleGoals(rows, empty);
  const ScaleGoal& rows_only = Goal(rows_goals, "p99_100_timers_1khz_aligned");
  EXPECT_EQ(rows_only.met, false);
  EXPECT_EQ(rows_only.limit, 40);
  EXPECT_THAT(rows_only.note, Not(HasSubstr("pairs")));
}

// The pairs run only where both rows of the goal do.
TEST(TailPairLoadsTest, OneAndAHundredTimersAt1KHzWhenBothArePlanned) {
  ScaleOptions options;
  options.timers = {1, 100};
  options.watchers = {};
  const auto loads = TailPairLoads(PlanScaleRows(options));
  ASSERT_TRUE(loads.has_value());
  EXPECT_EQ((*loads)[0].Name(), "1 timer, 1 kHz");
  EXPECT_EQ((*loads)[1].Name(), "100 timers, 1 kHz, aligned");
  options.timers = {1, 10};
  EXPECT_EQ(TailPairLoads(PlanScaleRows(options)), std::nullopt);
  options.timers = {100};
  EXPECT_EQ(TailPairLoads(PlanScaleRows(options)), std::nullopt);
  options.timers = {1, 100};
  options.timer_intervals_us = {10000};
  EXPECT_EQ(TailPairLoads(PlanScaleRows(options)), std::nullopt)
      << "100 Hz only";
}

// A timer whose calls started `mean_us` after their times, on average.
timing::TimerTiming CalledTimer(std::string name, double mean_us) {
  timing::TimerTiming timer;
  timer.name = std::move(name);
  timer.count = 2;
  timer.wakeup_latency.Record(
      std::chrono::nanoseconds(static_cast<int64_t>(mean_us * 1000 - 100)));
  timer.wakeup_latency.Record(
      std::chrono::nanoseconds(static_cast<int64_t>(mean_us * 1000 + 100)));
  return timer;
}

TEST(CallSpacingUsTest, TheSpreadOfTheMeansOverTheCallsBetween) {
  const ScaleLoad load{.timers = 4, .interval_us = 1000};
  std::vector<timing::TimerTiming> timers = {
      CalledTimer("timer_2", 1.6), CalledTimer("timer_0", 1.0),
      CalledTimer("timer_3", 1.9), CalledTimer("timer_1", 1.3),
      // The report's own timer, late as it may be, is not one of them.
      CalledTimer("timing_reports", 50)};
  timers.emplace_back();  // Never called: no samples, left out.
  timers.back().name = "idle";
  EXPECT_NEAR(CallSpacingUs(load, timers), 0.3, 1e-9);
}

TEST(CallSpacingUsTest, NaNWhereNoTimersWereDueTogether) {
  const std::vector<timing::TimerTiming> two = {CalledTimer("a", 1),
                                                CalledTimer("b", 2)};
  EXPECT_TRUE(std::isnan(
      CallSpacingUs({.timers = 2, .interval_us = 1000, .aligned = false}, two)))
      << "spread";
  EXPECT_TRUE(
      std::isnan(CallSpacingUs({.timers = 1, .interval_us = 1000}, two)))
      << "one timer";
  EXPECT_TRUE(std::isnan(
      CallSpacingUs({.timers = 2, .interval_us = 1000}, {CalledTimer("a", 1)})))
      << "one of them called";
  EXPECT_NEAR(CallSpacingUs({.timers = 2, .interval_us = 1000}, two), 1.0, 1e-9)
      << "1 us apart";
}

TEST(EvaluateScaleGoalsTest, AGoalWhoseRowDidNotRunIsNotMeasured) {
  const std::vector<ScaleGoal> goals = EvaluateScaleGoals(
      {Row({.timers = 100, .interval_us = 1000}, 20, 100, 1)});
  const ScaleGoal& cpu = Goal(goals, "cpu_100_timers_1khz_aligned");
  EXPECT_EQ(cpu.met, false);
  EXPECT_FALSE(cpu.BelowFloor()) << "the floor is 0.01 %: the loop's miss";
  EXPECT_FALSE(Goal(goals, "p99_100_timers_1khz_aligned").met.has_value())
      << "no 1-timer row";
  EXPECT_FALSE(Goal(goals, "cpu_1000_timers_100hz_spread").met.has_value());
}

TEST(ScaleTableTest, SaysWhatWasSkippedAndWhyAGoalWasMissed) {
  ScaleOptions options;
  options.timers = {1, 100, 1000};
  options.watchers = {4};
  const ScalePlan plan = PlanScaleRows(options);
  const std::vector<ScaleRow> rows = {
      Row({.timers = 1, .interval_us = 1000}, 0.5, 20, 0.4),
      Row({.timers = 100, .interval_us = 1000}, 20, 60, 30),
      Row({.timers = 1000, .interval_us = 10000, .aligned = false}, 45, 30,
          40)};
  const std::string table =
      ScaleTable(plan, rows, EvaluateScaleGoals(rows), 3, 80);
  EXPECT_THAT(table, HasSubstr("Scale: 3.0 s per run at SCHED_FIFO 80"));
  EXPECT_THAT(table, HasSubstr("  100 timers, 1 kHz, aligned "));
  EXPECT_THAT(table, HasSubstr("skipped: 1000 timers, 1 kHz (aligned and "
                               "spread): cyclictest -t 1000 would wake"));
  EXPECT_THAT(table,
              HasSubstr("100 timers, 1 kHz, aligned: CPU <= 15 %: 20.0 %: "
                        "MISSED; the machine's floor is 0.40 %"));
  EXPECT_THAT(table, HasSubstr("the rest is the loop's"));
  EXPECT_THAT(table, HasSubstr("p99 wakeup latency <= 2x the p99 of 1 timer, "
                               "1 kHz: 60.0 us (limit 40.0 us): MISSED; the "
                               "100th timer"));
  EXPECT_THAT(table, HasSubstr("1000 timers, 100 Hz, aligned: CPU <= 15 %: "
                               "not measured"));
  EXPECT_THAT(table, HasSubstr("1000 timers, 100 Hz, spread: CPU <= 15 %: "
                               "45.0 %: MISSED; below what this machine "
                               "allows: the floor is 40.0 %"));
}

TEST(ScaleTableTest, AGoalOnItsLimitShowsWhichSideItIs) {
  const std::vector<ScaleRow> rows = {
      Row({.timers = 1, .interval_us = 1000}, 0.5, 52.735, 0.4),
      Row({.timers = 100, .interval_us = 1000}, 5, 105.471, 30)};
  const std::string table =
      ScaleTable(PlanScaleRows({}), rows, EvaluateScaleGoals(rows), 3, 80);
  EXPECT_THAT(table, HasSubstr("105.471 us (limit 105.470 us): MISSED"));
}

TEST(ScaleJsonTest, RowsSkippedAndGoalsAsJson) {
  ScaleOptions options;
  options.timers = {1, 100, 1000};
  const ScalePlan plan = PlanScaleRows(options);
  std::vector<ScaleRow> rows = {
      Row({.timers = 100, .interval_us = 1000}, 5, 39, 30),
      Row({.watchers = 4, .interval_us = 1000}, 2, 30, 1)};
  rows[1].sender_cpu_percent = 1.5;
  JsonWriter json;
  json.BeginObject();
  json.Key("scale");
  WriteScaleRows(rows, 80, &json);
  json.Key("scale_skipped");
  WriteScaleSkipped(plan, &json);
  json.Key("scale_goals");
  WriteScaleGoals(EvaluateScaleGoals(rows), &json);
  json.EndObject();
  auto doc = JsonDocument::Parse(json.Text(), "scale json");
  ASSERT_TRUE(doc.ok()) << doc.status().message() << "\n" << json.Text();
  const JsonValue row = doc->root()["scale"].At(0);
  EXPECT_EQ(*row["what"].String(), "100 timers, 1 kHz, aligned");
  EXPECT_EQ(*row["phases"].String(), "aligned");
  EXPECT_EQ(*row["cpu_percent"].Number(), 5);
  EXPECT_DOUBLE_EQ(*row["cost_per_callback_us"].Number(), 0.5);
  EXPECT_TRUE(row["call_spacing_us"].IsNull()) << "not measured: null";
  EXPECT_EQ(*row["callbacks_per_s"].Number(), 100000);
  EXPECT_TRUE(row["latency"]["p99_us"].exists());
  EXPECT_FALSE(row["sender_cpu_percent"].exists()) << "timers have none";
  EXPECT_EQ(*row["cyclictest"]["threads"].Integer(), 100);
  EXPECT_EQ(*row["cyclictest"]["args"].At(4).String(), "--aligned=0");
  EXPECT_DOUBLE_EQ(*row["cyclictest"]["cost_per_callback_us"].Number(), 3);
  EXPECT_TRUE(row["cyclictest"]["latency"]["classes_us"].exists());
  EXPECT_EQ(*doc->root()["scale"].At(1)["sender_cpu_percent"].Number(), 1.5);
  EXPECT_THAT(*doc->root()["scale_skipped"].At(0)["what"].String(),
              HasSubstr("1000 timers, 1 kHz"));
  const JsonValue goals = doc->root()["scale_goals"];
  EXPECT_EQ(*goals.At(0)["key"].String(), "cpu_100_timers_1khz_aligned");
  EXPECT_FALSE(goals.At(0)["met"].IsNull());
  EXPECT_FALSE(goals.At(0)["met"].String().ok()) << "a boolean";
  EXPECT_THAT(json.Text(), HasSubstr(R"("met":true)"));
  EXPECT_TRUE(goals.At(1)["met"].IsNull()) << "no 1-timer row";
  EXPECT_TRUE(goals.At(1)["value"].IsNull());
}

}  // namespace
}  // namespace aos::bench
