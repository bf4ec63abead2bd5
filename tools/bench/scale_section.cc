#include "tools/bench/scale_section.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "tools/bench/bench_harness.h"

namespace aos::bench {
namespace {

// The goals' limits (issue 27).
constexpr double kCpuGoalPercent = 15;
constexpr double kP99GoalRatio = 2;

std::string Plural(int count, std::string_view one, std::string_view many) {
  return StrCat(count, " ", count == 1 ? one : many);
}

// printf into a std::string.
template <typename... Args>
std::string Format(const char* format, Args... args) {
  char line[512];
  snprintf(line, sizeof(line), format, args...);
  return line;
}

// The measured row that ran `load`'s timers at `interval_us`, `aligned`.
const ScaleRow* FindTimerRow(const std::vector<ScaleRow>& rows, int timers,
                             int interval_us, bool aligned) {
  for (const ScaleRow& row : rows) {
    if (row.load.timers == timers && row.load.interval_us == interval_us &&
        (timers == 1 || row.load.aligned == aligned)) {
      return &row;
    }
  }
  return nullptr;
}

// A CPU goal: `row`'s CPU at most kCpuGoalPercent, with the floor
// cyclictest shows.
ScaleGoal CpuGoal(std::string key, const ScaleLoad& asked, const ScaleRow* row,
                  const std::vector<ScaleRow>& rows) {
  ScaleGoal goal;
  goal.key = std::move(key);
  goal.text = StrCat(asked.Name(), ": CPU <= ", kCpuGoalPercent, " %");
  goal.limit = kCpuGoalPercent;
  goal.unit = "%";
  if (row == nullptr) return goal;
  goal.value = row->ours.cpu_percent;
  goal.met = goal.value <= goal.limit;
  CpuFloor floor = CpuFloorOf(*row, rows);
  goal.floor = floor.percent;
  goal.floor_text = std::move(floor.how);
  return goal;
}

}  // namespace

std::string ScaleLoad::Rate() const {
  const double hz = 1e6 / interval_us;
  if (hz >= 1000 && std::fmod(hz, 1000) == 0) return StrCat(hz / 1000, " kHz");
  if (std::fmod(hz, 1) == 0) return StrCat(hz, " Hz");
  return StrCat(Fixed(hz, 1), " Hz");
}

std::string ScaleLoad::Name() const {
  if (timers == 0) {
    return StrCat(Plural(watchers, "watcher process", "watcher processes"),
                  ", ", Rate());
  }
  return StrCat(Plural(timers, "timer", "timers"), ", ", Rate(),
                timers == 1 ? "" : StrCat(", ", Phases()));
}

double ScaleLoad::CallsPerSecond() const { return Count() * 1e6 / interval_us; }

double ScaleLoad::LoopWakeupsPerSecond() const {
  if (timers > 0 && aligned) return 1e6 / interval_us;
  return CallsPerSecond();
}

double MaxWakeupsPerSecond(int cpus) { return 50000.0 * std::max(cpus, 1); }

absl::StatusOr<std::vector<int>> ParseCounts(std::string_view flag,
                                             std::string_view value, int max) {
  if (value.empty()) {
    return FlagError(flag, value, " is empty: give counts like 1,10,100");
  }
  std::vector<int> counts;
  size_t begin = 0;
  while (begin <= value.size()) {
    const size_t end = std::min(value.find(',', begin), value.size());
    const std::string_view piece = value.substr(begin, end - begin);
    int count = 0;
    const auto [ptr, error] =
        std::from_chars(piece.data(), piece.data() + piece.size(), count);
    if (piece.empty() || error != std::errc() ||
        ptr != piece.data() + piece.size() || count < 1 || count > max) {
      return FlagError(
          flag, value,
          StrCat(": '", piece, "' is not a whole number from 1 to ", max));
    }
    if (std::find(counts.begin(), counts.end(), count) == counts.end()) {
      counts.push_back(count);
    }
    begin = end + 1;
  }
  return counts;
}

absl::StatusOr<ScaleOptions> ScaleOptionsFromFlags(const ScaleFlags& flags) {
  if (flags.scale_only && flags.main_job_only) {
    return FlagError("--scale_only", true,
                     " cannot go with --main_job_only: give one of them");
  }
  if (flags.scale_only && !flags.scale) {
    return FlagError("--scale_only", true,
                     " cannot go with --noscale: give one of them");
  }
  ScaleOptions options;
  absl::StatusOr<std::vector<int>> timers =
      ParseCounts("--scale_timers", flags.timers, 1000);
  if (!timers.ok()) return timers.status();
  options.timers = *std::move(timers);
  absl::StatusOr<std::vector<int>> watchers =
      ParseCounts("--scale_watchers", flags.watchers, 1000);
  if (!watchers.ok()) return watchers.status();
  options.watchers = *std::move(watchers);
  if (flags.seconds != 0) {
    const absl::Status seconds = CheckInRange(
        "--scale_seconds", flags.seconds, 0.5, 3600.0,
        " is not 0.5-3600 seconds (or 0: 3, or 15 with --long_run)");
    if (!seconds.ok()) return seconds;
    options.seconds = flags.seconds;
  } else {
    options.seconds = flags.long_run ? 15 : 3;
  }
  const absl::Status pairs =
      CheckInRange("--scale_p99_pairs", flags.p99_pairs, 0, 20);
  if (!pairs.ok()) return pairs;
  options.p99_pairs = flags.p99_pairs;
  options.max_wakeups_per_s = MaxWakeupsPerSecond(flags.cpus);
  return options;
}

absl::Status CheckScaleCapacity(const ScaleOptions& options,
                                int channel_num_watchers, int aos_num_senders,
                                std::string_view config_file) {
  int most = 0;
  for (int watchers : options.watchers) most = std::max(most, watchers);
  if (most > channel_num_watchers) {
    return FlagError(
        "--scale_watchers", StrJoin(options.watchers, ","),
        StrCat(" asks for ", most,
               " watcher processes on /test "
               "aos.examples.Ping, whose num_watchers is ",
               channel_num_watchers, " in ", config_file,
               ": raise it there (tools/bench/scale_watchers.json)"));
  }
  // Each watcher process and ping send timing reports on /aos.
  if (most + 1 > aos_num_senders) {
    return FlagError(
        "--scale_watchers", StrJoin(options.watchers, ","),
        StrCat(" needs ", most + 1,
               " senders on /aos aos.timing.Report (each "
               "watcher process and ping report), whose num_senders is ",
               aos_num_senders, " in ", config_file,
               ": raise it there (tools/bench/scale_watchers.json)"));
  }
  return absl::OkStatus();
}

std::optional<std::array<ScaleLoad, 2>> TailPairLoads(const ScalePlan& plan) {
  const ScaleLoad one{.timers = 1, .interval_us = 1000};
  const ScaleLoad hundred{.timers = 100, .interval_us = 1000};
  auto planned = [&](const ScaleLoad& load) {
    return std::any_of(plan.rows.begin(), plan.rows.end(),
                       [&](const ScaleLoad& row) {
                         return row.timers == load.timers &&
                                row.interval_us == load.interval_us &&
                                row.aligned == load.aligned;
                       });
  };
  if (!planned(one) || !planned(hundred)) return std::nullopt;
  return std::array<ScaleLoad, 2>{one, hundred};
}

ScalePlan PlanScaleRows(const ScaleOptions& options) {
  ScalePlan plan;
  auto too_many = [&](const ScaleLoad& load) {
    return load.CallsPerSecond() > options.max_wakeups_per_s;
  };
  auto why = [&](const ScaleLoad& load) {
    return StrCat(
        "cyclictest -t ", load.Count(), " would wake ",
        Fixed(load.CallsPerSecond(), 0), " threads a second, more than the ",
        Fixed(options.max_wakeups_per_s, 0),
        " this bench allows (50000 per CPU): at 2-5 us of CPU per thread "
        "wakeup on a VM it would need 2 to 5 CPUs at SCHED_FIFO for the "
        "whole run",
        load.timers > 0
            ? StrCat(", and one loop would have to run ",
                     Fixed(load.CallsPerSecond(), 0), " calls a second")
            : "");
  };
  std::vector<int> intervals = options.timer_intervals_us;
  std::sort(intervals.begin(), intervals.end());
  for (int interval_us : intervals) {
    for (int timers : options.timers) {
      ScaleLoad load{.timers = timers, .interval_us = interval_us};
      if (too_many(load)) {
        plan.skipped.push_back(
            {.what = timers == 1 ? load.Name()
                                 : StrCat(load.Name().substr(
                                              0, load.Name().rfind(", ")),
                                          " (aligned and spread)"),
             .why = why(load),
             .load = load});
        continue;
      }
      plan.rows.push_back(load);
      if (timers > 1) {
        load.aligned = false;
        plan.rows.push_back(load);
      }
    }
  }
  for (int watchers : options.watchers) {
    const ScaleLoad load{.watchers = watchers,
                         .interval_us = options.watcher_interval_us};
    if (too_many(load)) {
      plan.skipped.push_back(
          {.what = load.Name(), .why = why(load), .load = load});
      continue;
    }
    plan.rows.push_back(load);
  }
  return plan;
}

std::vector<std::string> CyclictestScaleArgs(const ScaleLoad& load,
                                             int priority) {
  const int threads = load.Count();
  const int offset_us =
      load.aligned ? 0 : std::max(1, load.interval_us / threads);
  return {"--mlockall",
          StrCat("-p", priority),
          StrCat("-i", load.interval_us),
          StrCat("--threads=", threads),
          StrCat("--aligned=", offset_us),
          "--histogram=10000",
          "-q"};
}

double CpuUse::Percent() const {
  if (!(wall_seconds > 0)) return NAN;
  return 100 * cpu_seconds / wall_seconds;
}

double ScaleSide::CostPerCallUs() const {
  if (!(calls_per_s > 0)) return NAN;
  return cpu_percent / 100 / calls_per_s * 1e6;
}

double CallSpacingUs(const ScaleLoad& load,
                     const std::vector<timing::TimerTiming>& timers) {
  if (!load.aligned || load.timers < 2) return NAN;
  // Means, not medians: how late the wakeup itself came is in every
  // timer's mean alike and cancels out, where a median can fall on either
  // side of a wakeup that is late one time in two.
  double lowest_s = std::numeric_limits<double>::infinity();
  double highest_s = -std::numeric_limits<double>::infinity();
  int called = 0;
  for (const timing::TimerTiming& timer : timers) {
    if (timer.name == "timing_reports" ||
        timer.wakeup_latency.statistic().count() == 0) {
      continue;
    }
    const double mean_s = timer.wakeup_latency.statistic().average();
    lowest_s = std::min(lowest_s, mean_s);
    highest_s = std::max(highest_s, mean_s);
    ++called;
  }
  if (called < 2) return NAN;
  return (highest_s - lowest_s) * 1e6 / (load.timers - 1);
}

CpuFloor CpuFloorOf(const ScaleRow& row, const std::vector<ScaleRow>& rows) {
  CpuFloor floor;
  const ScaleLoad& load = row.load;
  if (load.timers > 1 && load.aligned) {
    const ScaleRow* one = FindTimerRow(rows, 1, load.interval_us, true);
    if (one != nullptr && !std::isnan(one->cyclictest.cpu_percent)) {
      floor.percent = one->cyclictest.cpu_percent;
      floor.how = StrCat("cyclictest -t 1 at ", load.Rate(),
                         " beside the 1-timer row: one thread woken ",
                         Fixed(load.LoopWakeupsPerSecond(), 0),
                         " times a second, as this loop is");
      return floor;
    }
  }
  const double per_wakeup_us = row.cyclictest.CostPerCallUs();
  if (std::isnan(per_wakeup_us)) return floor;
  floor.percent = per_wakeup_us * 1e-6 * load.LoopWakeupsPerSecond() * 100;
  floor.how =
      StrCat("cyclictest -t ", load.Count(), " in the same row spent ",
             ThreeDigits(per_wakeup_us),
             " us of CPU per thread wakeup; the row needs ",
             Fixed(load.LoopWakeupsPerSecond(), 0), " wakeups a second");
  return floor;
}

std::vector<ScaleGoal> EvaluateScaleGoals(const std::vector<ScaleRow>& rows,
                                          const TailPairs& pairs) {
  std::vector<ScaleGoal> goals;
  const ScaleLoad hundred{.timers = 100, .interval_us = 1000};
  const ScaleRow* hundred_row = FindTimerRow(rows, 100, 1000, true);
  goals.push_back(
      CpuGoal("cpu_100_timers_1khz_aligned", hundred, hundred_row, rows));

  ScaleGoal p99;
  p99.key = "p99_100_timers_1khz_aligned";
  p99.text = StrCat(hundred.Name(), ": p99 wakeup latency <= ", kP99GoalRatio,
                    "x the p99 of 1 timer, 1 kHz");
  p99.unit = "us";
  const ScaleRow* one_row = FindTimerRow(rows, 1, 1000, true);
  if (one_row != nullptr) {
    p99.limit = kP99GoalRatio * one_row->ours.latency.p99_us;
  }
  if (hundred_row != nullptr && one_row != nullptr) {
    p99.value = hundred_row->ours.latency.p99_us;
    const double per_call = hundred_row->ours.CostPerCallUs();
    const double spacing = hundred_row->ours.call_spacing_us;
    p99.note = StrCat(
        "the 100th timer of a wakeup starts after the 99 before it: ",
        std::isnan(spacing)
            ? StrCat("99 x ", ThreeDigits(per_call), " us of CPU per call = ",
                     ThreeDigits(99 * per_call), " us")
            : StrCat("99 x ", ThreeDigits(spacing),
                     " us a call (the timers' mean wakeup latencies) = ",
                     ThreeDigits(99 * spacing), " us (", ThreeDigits(per_call),
                     " us of CPU per call, the wakeup's own work included)"),
        "; cyclictest -t 100 --aligned=0 (100 threads due together) p99 ",
        ThreeDigits(hundred_row->cyclictest.latency.p99_us), " us");
  }
  const bool paired =
      pairs.pairs > 0 && pairs.one.count > 0 && pairs.hundred.count > 0 &&
      !std::isnan(pairs.one.p99_us) && !std::isnan(pairs.hundred.p99_us);
  if (paired) {
    // The rows ran minutes apart; the pairs back to back.
    std::string rows_alone = "the rows alone did not both run";
    if (hundred_row != nullptr && one_row != nullptr) {
      rows_alone = StrCat("the rows alone, run apart: ", ThreeDigits(p99.value),
                          " us against a limit of ", ThreeDigits(p99.limit),
                          " (", p99.value <= p99.limit ? "met" : "missed", ")");
    }
    int pairs_met = 0;
    std::string each;
    const size_t runs =
        std::min(pairs.one_p99_us.size(), pairs.hundred_p99_us.size());
    for (size_t i = 0; i < runs; ++i) {
      const bool met =
          pairs.hundred_p99_us[i] <= kP99GoalRatio * pairs.one_p99_us[i];
      pairs_met += met;
      StrAppend(&each, i == 0 ? "" : ", ", ThreeDigits(pairs.hundred_p99_us[i]),
                "/", ThreeDigits(pairs.one_p99_us[i]));
    }
    p99.limit = kP99GoalRatio * pairs.one.p99_us;
    p99.value = pairs.hundred.p99_us;
    p99.note = StrCat(
        "judged on ", pairs.pairs, " pairs of runs back to back (A B B A, ",
        "100 timers first), each load's runs pooled; p99 of 100 timers / 1 "
        "timer in each pair, us: ",
        each, " (", pairs_met, " of ", runs, " met); ", rows_alone,
        p99.note.empty() ? "" : "; ", p99.note);
  }
  // Measured (a NaN figure, a row without a histogram, misses it).
  if (paired || (hundred_row != nullptr && one_row != nullptr)) {
    p99.met = p99.value <= p99.limit;
  }
  goals.push_back(std::move(p99));

  for (const bool aligned : {true, false}) {
    const ScaleLoad thousand{
        .timers = 1000, .interval_us = 10000, .aligned = aligned};
    goals.push_back(CpuGoal(StrCat("cpu_1000_timers_100hz_", thousand.Phases()),
                            thousand, FindTimerRow(rows, 1000, 10000, aligned),
                            rows));
  }
  return goals;
}

std::string ScaleTable(const ScalePlan& plan, const std::vector<ScaleRow>& rows,
                       const std::vector<ScaleGoal>& goals,
                       double seconds_per_run, int priority) {
  std::string out = StrCat(
      "Scale: ", Fixed(seconds_per_run, 1), " s per run at SCHED_FIFO ",
      priority,
      "; beside each row, in the same run, cyclictest -t N: N threads at "
      "the same interval and priority, woken together or spread as the "
      "timers are\n");
  out += Format("  %-32s %23s %7s %8s %8s %6s | %23s %7s %8s\n", "",
                "wakeup latency (us)", "CPU %", "us/call", "calls/s", "missed",
                "cyclictest -t N (us)", "CPU %", "us/wake");
  out += Format("  %-32s %7s %7s %7s %7s %8s %8s %6s | %7s %7s %7s %7s %8s\n",
                "aos", "p50", "p99", "max", "", "", "", "", "p50", "p99", "max",
                "", "");
  for (const ScaleRow& row : rows) {
    const Figures& a = row.ours.latency;
    const Figures& c = row.cyclictest.latency;
    out +=
        Format("  %-32s %7s %7s %7s %7s %8s %8s %6llu | %7s %7s %7s %7s %8s\n",
               row.load.Name().c_str(), ThreeDigits(a.p50_us).c_str(),
               ThreeDigits(a.p99_us).c_str(), ThreeDigits(a.max_us).c_str(),
               ThreeDigits(row.ours.cpu_percent).c_str(),
               ThreeDigits(row.ours.CostPerCallUs()).c_str(),
               Fixed(row.ours.calls_per_s, 0).c_str(),
               static_cast<unsigned long long>(row.ours.missed_cycles),
               ThreeDigits(c.p50_us).c_str(), ThreeDigits(c.p99_us).c_str(),
               ThreeDigits(c.max_us).c_str(),
               ThreeDigits(row.cyclictest.cpu_percent).c_str(),
               ThreeDigits(row.cyclictest.CostPerCallUs()).c_str());
  }
  for (const SkippedScaleLoad& skipped : plan.skipped) {
    out += StrCat("  skipped: ", skipped.what, ": ", skipped.why, "\n");
  }
  out +=
      "  CPU % is of one CPU (the loop's process, or all watcher processes; "
      "cyclictest's whole process), measured over the run; us/call is CPU "
      "time per handler call, cyclictest's per thread wakeup\n";
  out += "Scale goals:\n";
  for (const ScaleGoal& goal : goals) {
    out += StrCat("  ", goal.text, ": ");
    if (!goal.met.has_value()) {
      out += "not measured (a row it needs did not run)\n";
      continue;
    }
    // One decimal, or three where that shows no difference: a limit of 2x
    // another measurement may sit close.
    const int digits = Fixed(goal.value) == Fixed(goal.limit) ? 3 : 1;
    out += StrCat(Fixed(goal.value, digits), " ", goal.unit);
    if (goal.unit != "%") {
      out += StrCat(" (limit ", Fixed(goal.limit, digits), " ", goal.unit, ")");
    }
    out += *goal.met ? ": met" : ": MISSED";
    if (!*goal.met) {
      if (goal.BelowFloor()) {
        out += StrCat("; below what this machine allows: the floor is ",
                      Fixed(goal.floor), " ", goal.unit, " (", goal.floor_text,
                      ")");
      } else if (!std::isnan(goal.floor)) {
        out += StrCat("; the machine's floor is ", Fixed(goal.floor, 2), " ",
                      goal.unit, " (", goal.floor_text,
                      "): the rest is the loop's");
      }
      if (!goal.note.empty()) out += StrCat("; ", goal.note);
    }
    out += "\n";
  }
  return out;
}

void WriteScaleRows(const std::vector<ScaleRow>& rows, int priority,
                    JsonWriter* json) {
  json->BeginArray();
  for (const ScaleRow& row : rows) {
    json->BeginObject();
    json->Key("what").String(row.load.Name());
    json->Key("timers").Number(row.load.timers);
    json->Key("watchers").Number(row.load.watchers);
    json->Key("interval_us").Number(row.load.interval_us);
    json->Key("phases").String(row.load.Phases());
    json->Key("cpu_percent").Number(row.ours.cpu_percent);
    json->Key("cost_per_callback_us").Number(row.ours.CostPerCallUs());
    json->Key("callbacks_per_s").Number(row.ours.calls_per_s);
    json->Key("missed_cycles").Number(row.ours.missed_cycles);
    json->Key("call_spacing_us").Number(row.ours.call_spacing_us);
    json->Key("floor_cpu_percent").Number(CpuFloorOf(row, rows).percent);
    if (row.load.watchers > 0) {
      json->Key("sender_cpu_percent").Number(row.sender_cpu_percent);
    }
    json->Key("latency");
    WriteFigures(row.ours.latency, json);
    json->Key("cyclictest").BeginObject();
    json->Key("threads").Number(row.load.Count());
    json->Key("args").BeginArray();
    for (const std::string& arg : CyclictestScaleArgs(row.load, priority)) {
      json->String(arg);
    }
    json->EndArray();
    json->Key("cpu_percent").Number(row.cyclictest.cpu_percent);
    json->Key("cost_per_callback_us").Number(row.cyclictest.CostPerCallUs());
    json->Key("callbacks_per_s").Number(row.cyclictest.calls_per_s);
    json->Key("latency");
    WriteFigures(row.cyclictest.latency, json);
    json->EndObject();
    json->EndObject();
  }
  json->EndArray();
}

void WriteScaleSkipped(const ScalePlan& plan, JsonWriter* json) {
  json->BeginArray();
  for (const SkippedScaleLoad& skipped : plan.skipped) {
    json->BeginObject();
    json->Key("what").String(skipped.what);
    json->Key("why").String(skipped.why);
    json->EndObject();
  }
  json->EndArray();
}

void WriteScaleGoals(const std::vector<ScaleGoal>& goals, JsonWriter* json) {
  json->BeginArray();
  for (const ScaleGoal& goal : goals) {
    json->BeginObject();
    json->Key("key").String(goal.key);
    json->Key("goal").String(goal.text);
    json->Key("value").Number(goal.value);
    json->Key("limit").Number(goal.limit);
    json->Key("unit").String(goal.unit);
    json->Key("met");
    if (goal.met.has_value()) {
      json->Bool(*goal.met);
    } else {
      json->Null();
    }
    json->Key("floor").Number(goal.floor);
    json->Key("floor_how").String(goal.floor_text);
    json->Key("below_floor").Bool(goal.BelowFloor());
    json->Key("note").String(goal.note);
    json->EndObject();
  }
  json->EndArray();
}

void WriteTailPairs(const TailPairs& pairs, JsonWriter* json) {
  json->BeginObject();
  json->Key("pairs").Number(pairs.pairs);
  auto numbers = [&](std::string_view key, const std::vector<double>& values) {
    json->Key(key).BeginArray();
    for (double value : values) json->Number(value);
    json->EndArray();
  };
  numbers("one_timer_p99_us", pairs.one_p99_us);
  numbers("hundred_timers_p99_us", pairs.hundred_p99_us);
  json->Key("one_timer");
  WriteFigures(pairs.one, json);
  json->Key("hundred_timers");
  WriteFigures(pairs.hundred, json);
  json->EndObject();
}

}  // namespace aos::bench
