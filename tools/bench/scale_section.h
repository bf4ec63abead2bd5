#ifndef TOOLS_BENCH_SCALE_SECTION_H_
#define TOOLS_BENCH_SCALE_SECTION_H_

// The scale section of latency_bench (tools/bench/latency.sh; issue 27):
// which rows run, what cyclictest runs beside each, what a row keeps, the
// goals and how they are judged, the table and the JSON. The measuring
// itself (starting scale_app, the streamer, cyclictest) is latency_bench's;
// everything here is plain values, so that it is tested without running
// anything.
//
//   absl::StatusOr<ScaleOptions> options = ScaleOptionsFromFlags(flags);
//   const ScalePlan plan = PlanScaleRows(*options);
//   for (const ScaleLoad& load : plan.rows) {
//     ScaleRow row{.load = load};
//     row.ours = ...;        // scale_app's reports and CPU time
//     row.cyclictest = ...;  // cyclictest CyclictestScaleArgs(load, ...)
//     rows.push_back(row);
//   }
//   std::cout << ScaleTable(plan, rows, EvaluateScaleGoals(rows));
//
// A row is N timers in one loop (1 kHz or 100 Hz, due at the same instant
// or spread evenly over the period) or N processes each watching one
// channel; beside it, in the same run, `cyclictest -t N` at the same
// interval and priority: N threads, woken at the same instants as the
// timers (--aligned=0 for timers due together and for watchers, whom one
// message wakes at once; --aligned=period/N for spread timers).

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/events/timing_entry.h"
#include "aos/util/json_writer.h"
#include "tools/bench/bench_figures.h"

namespace aos::bench {

// What one row runs.
struct ScaleLoad {
  // N timers in one loop (watchers 0), or N processes watching one channel
  // (timers 0).
  int timers = 0;
  int watchers = 0;
  // The timers' period, or the interval between the messages watched.
  int interval_us = 1000;
  // Timers: all due at the same instant, or due times spread evenly over
  // the period (timer i at i/N of it). Always true for one timer and for
  // watchers (one message wakes them all at once).
  bool aligned = true;

  // "100 timers, 1 kHz, aligned", "1 timer, 100 Hz", "16 watcher
  // processes, 1 kHz".
  std::string Name() const;
  // timers or watchers.
  int Count() const { return timers > 0 ? timers : watchers; }
  // scale_app's --phases.
  std::string_view Phases() const { return aligned ? "aligned" : "spread"; }
  // "1 kHz", "100 Hz", "333.3 Hz".
  std::string Rate() const;
  // Calls a second: Count() per interval.
  double CallsPerSecond() const;
  // Distinct instants a second at which something is due, in each process
  // summed: the fewest kernel wakeups that can run the row (one per
  // interval for timers due together, one per timer for spread ones, one
  // per watcher process per message). cyclictest's threads wake
  // CallsPerSecond() times a second.
  double LoopWakeupsPerSecond() const;
};

// Which rows the section runs (latency_bench's --scale_* flags).
struct ScaleOptions {
  std::vector<int> timers = {1, 10, 100, 1000};
  std::vector<int> timer_intervals_us = {1000, 10000};
  std::vector<int> watchers = {1, 4, 16, 64};
  int watcher_interval_us = 1000;
  // A row whose cyclictest -t N would wake more threads a second than this
  // is skipped, ours with it (ScalePlan::skipped says why): both would take
  // most of the machine at SCHED_FIFO for the whole run. See
  // MaxWakeupsPerSecond.
  double max_wakeups_per_s = 100000;
  // How long each side of a row is measured.
  double seconds = 3;
  // Pairs of runs of the p99 goal's two loads back to back (TailPairs); 0:
  // the goal compares the rows themselves.
  int p99_pairs = 2;
};

// The default cap of ScaleOptions::max_wakeups_per_s for `cpus` CPUs:
// 50000 thread wakeups a second per CPU. On a VM one timer wakeup costs
// the kernel 3-5 us of CPU (docs/benchmarks.md, "Timers at scale"), so this
// is a quarter of each CPU at SCHED_FIFO, and 1000 timers at 1 kHz (a
// million a second) are out of reach of two.
double MaxWakeupsPerSecond(int cpus);

// The flags of the section, as latency_bench has them.
struct ScaleFlags {
  // --scale (run the section), --scale_only, --main_job_only.
  bool scale = true;
  bool scale_only = false;
  bool main_job_only = false;
  // --scale_timers, --scale_watchers: comma-separated counts.
  std::string timers = "1,10,100,1000";
  std::string watchers = "1,4,16,64";
  // --scale_seconds; 0: 3, or 15 with --long_run.
  double seconds = 0;
  // --scale_p99_pairs: 0 to 20.
  int p99_pairs = 2;
  bool long_run = false;
  // The machine's CPUs, for the wakeup cap.
  int cpus = 2;
};

// The options the flags ask for; an error naming the flag (flag_checks.h's
// shape) for a count that is not a whole number from 1 to 1000, an empty
// list, a negative or absurd --scale_seconds, --scale_p99_pairs out of
// 0-20, or sections that contradict
// each other (--scale_only with --main_job_only or --noscale).
absl::StatusOr<ScaleOptions> ScaleOptionsFromFlags(const ScaleFlags& flags);

// "1,10,100" as counts, each from 1 to `max`, in the order given, repeats
// dropped; an error names `flag` and what is wrong.
absl::StatusOr<std::vector<int>> ParseCounts(std::string_view flag,
                                             std::string_view value, int max);

// Whether the watcher rows' config has room for them: `watchers` processes on
// the watched channel (its num_watchers) and, with the sender, on /aos (its
// num_senders: each process sends its timing reports). The error says
// which limit, the value and the config file.
absl::Status CheckScaleCapacity(const ScaleOptions& options,
                                int channel_num_watchers, int aos_num_senders,
                                std::string_view config_file);

struct SkippedScaleLoad {
  // "1000 timers, 1 kHz (aligned and spread)".
  std::string what;
  std::string why;
  ScaleLoad load;
};

struct ScalePlan {
  // In the order they run and print: timers by period (shortest first),
  // then count, aligned before spread (one timer once); then watchers.
  std::vector<ScaleLoad> rows;
  std::vector<SkippedScaleLoad> skipped;
};

ScalePlan PlanScaleRows(const ScaleOptions& options);

// The loads the p99 goal compares: 1 timer and 100 timers due together,
// both at 1 kHz (in that order), if `plan` runs both rows; nullopt
// otherwise.
std::optional<std::array<ScaleLoad, 2>> TailPairLoads(const ScalePlan& plan);

// cyclictest's arguments beside `load` (without -l LOOPS and --json): N
// threads (cyclictest -t N) at the same interval and SCHED_FIFO
// `priority`, all at that priority (--histogram), woken together
// (--aligned=0) or spread like the timers (--aligned=interval/N, whole
// microseconds), memory locked as our realtime loops lock theirs.
std::vector<std::string> CyclictestScaleArgs(const ScaleLoad& load,
                                             int priority);

// CPU time used over a stretch of wall time.
struct CpuUse {
  double cpu_seconds = NAN;
  double wall_seconds = NAN;

  // Percent of one CPU (100: one CPU all the time); NaN without wall time.
  double Percent() const;
};

// One side of a row, ours or cyclictest's.
struct ScaleSide {
  Figures latency = {};
  // Percent of one CPU, over the time measured.
  double cpu_percent = NAN;
  // Calls (timer or watcher handlers; cyclictest: thread wakeups) a second.
  double calls_per_s = NAN;
  // Cycles with no call because the loop was late (timers only).
  uint64_t missed_cycles = 0;
  // Ours, for more than one timer due together: how much later each call
  // of a wakeup starts than the one before it, in us: (the largest timer's
  // mean wakeup latency - the smallest's) / (timers - 1). NaN elsewhere.
  double call_spacing_us = NAN;

  // CPU time per call, us: the CPU % over the calls a second. NaN without
  // calls.
  double CostPerCallUs() const;
};

// ScaleSide::call_spacing_us of `load` from its loop's timers as a report
// gave them (the timing report's own timer left out): NaN unless the load
// is more than one timer due together and at least two of its timers were
// called.
double CallSpacingUs(const ScaleLoad& load,
                     const std::vector<timing::TimerTiming>& timers);

// One measured row.
struct ScaleRow {
  ScaleLoad load;
  ScaleSide ours = {};
  ScaleSide cyclictest = {};
  // Watcher rows: the sender's (ping's) CPU, percent of one CPU.
  double sender_cpu_percent = NAN;
};

// The p99 goal's two loads (TailPairLoads) measured again in pairs of runs
// back to back, A B B A (100 timers first): on a VM the tail of one run
// and that of another a minute later differ by more than the goal's
// factor, so the goal compares runs that saw the same moments of the
// machine. Empty (pairs 0) where the bench ran none.
struct TailPairs {
  int pairs = 0;
  // Each run's p99, us, in the order each load ran.
  std::vector<double> one_p99_us;
  std::vector<double> hundred_p99_us;
  // Every run of each load pooled (bench_figures.h's Merge).
  Figures one = {};
  Figures hundred = {};
};

// A goal of issue 27 and how this run did.
struct ScaleGoal {
  // A key for the JSON: "cpu_100_timers_1khz_aligned".
  std::string key;
  // What is asked: "100 timers, 1 kHz, aligned: CPU <= 15 %".
  std::string text;
  // Measured and allowed, in `unit` ("%", "us").
  double value = NAN;
  double limit = NAN;
  std::string unit;
  // Unset when a row it needs did not run (skipped, or not asked for).
  std::optional<bool> met;
  // What this machine allows at best, in `unit`, where the run shows it
  // (NaN where it does not), and how it was had.
  double floor = NAN;
  std::string floor_text;
  // Where the figures say more about a miss than the floor does.
  std::string note;

  // Whether the goal asks for less than the floor: missing it is the
  // machine's, not the loop's.
  bool BelowFloor() const { return floor > limit; }
};

// Issue 27's goals, judged on `rows`:
// - 100 timers at 1 kHz due together: CPU <= 15 %, with the floor
//   cyclictest shows for that many kernel wakeups (CpuFloorOf);
// - the same: p99 wakeup latency <= 2x the p99 of 1 timer at 1 kHz (the
//   100th timer of a wakeup waits for the 99 before it; the note gives
//   what that wait comes to at the row's call spacing): judged on
//   `pairs`' pooled figures where it has any, with each pair's p99s and
//   the rows' own comparison in the note; on the rows otherwise;
// - 1000 timers at 100 Hz, due together and spread: CPU <= 15 % each, with
//   their floors.
std::vector<ScaleGoal> EvaluateScaleGoals(const std::vector<ScaleRow>& rows,
                                          const TailPairs& pairs = {});

// The CPU the kernel alone needs to wake `row`'s loops as often as they
// must wake, from cyclictest in the same run, percent of one CPU (NaN
// without cyclictest's figures), and how it was had:
// - timers due together wake one thread once an interval: the CPU of
//   cyclictest -t 1 beside the 1-timer row of the same interval in `rows`
//   (cyclictest -t N's own threads, woken together, share their wakeups
//   and cost less each); without that row, the row's own cyclictest's CPU
//   per thread wakeup times LoopWakeupsPerSecond();
// - spread timers and watcher processes: the row's own cyclictest, whose
//   threads wake as often as they do (LoopWakeupsPerSecond()).
struct CpuFloor {
  double percent = NAN;
  std::string how;
};
CpuFloor CpuFloorOf(const ScaleRow& row, const std::vector<ScaleRow>& rows);

// The section as printed: a header, one line per row (ours, then
// cyclictest -t N), the skipped rows and why, and the goals met or MISSED,
// each missed one with the floor that explains it where there is one.
std::string ScaleTable(const ScalePlan& plan, const std::vector<ScaleRow>& rows,
                       const std::vector<ScaleGoal>& goals,
                       double seconds_per_run, int priority);

// Writes the section's rows into `json`, an array: each row's "what",
// "timers", "watchers", "interval_us", "phases", "cpu_percent",
// "cost_per_callback_us", "callbacks_per_s", "missed_cycles", "latency"
// (bench_figures.h's shape) and, for watchers, "sender_cpu_percent"; and
// "cyclictest", an object with "threads", "args" (CyclictestScaleArgs),
// "cpu_percent",
// "cost_per_callback_us" (per thread wakeup), "callbacks_per_s" and
// "latency". Each row also has "floor_cpu_percent" (CpuFloorOf).
void WriteScaleRows(const std::vector<ScaleRow>& rows, int priority,
                    JsonWriter* json);
// An array of the skipped rows: "what" and "why".
void WriteScaleSkipped(const ScalePlan& plan, JsonWriter* json);
// An array of the goals: "key", "goal", "value", "limit", "unit", "met"
// (null when not measured), "floor" (null where none), "floor_how",
// "below_floor", "note".
void WriteScaleGoals(const std::vector<ScaleGoal>& goals, JsonWriter* json);
// An object: "pairs", "one_timer_p99_us" and "hundred_timers_p99_us" (each
// run's, in order), "one_timer" and "hundred_timers" (pooled Figures).
void WriteTailPairs(const TailPairs& pairs, JsonWriter* json);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_SCALE_SECTION_H_
