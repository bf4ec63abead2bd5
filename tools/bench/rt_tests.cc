#include "tools/bench/rt_tests.h"

#include <atomic>
#include <cstdio>

#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"

DEFINE_string(rt_tests_dir, "/usr/bin",
              "Where cyclictest, sigwaittest and ptsematest are (Debian's "
              "rt-tests).");

namespace aos::bench {
namespace {

// cyclictest's thread: histogram, cycles, min, avg, max.
absl::StatusOr<Figures> FromCyclictest(Figures f, const JsonValue& thread) {
  const absl::Status classes = ReadClasses(thread["histogram"], &f.bins);
  if (!classes.ok()) return classes;
  const absl::StatusOr<int64_t> cycles = thread["cycles"].Integer();
  if (!cycles.ok()) return cycles.status();
  uint64_t in_classes = 0;
  for (const auto& [bin, count] : f.bins) in_classes += count;
  if (in_classes > static_cast<uint64_t>(*cycles)) {
    return absl::InvalidArgumentError(
        StrCat(thread.source(), ": ", thread.path(), "'s histogram holds ",
               in_classes, " samples, more than its ", *cycles, " cycles"));
  }
  f.overflows = static_cast<uint64_t>(*cycles) - in_classes;
  const absl::Status numbers = ReadNumbers(
      thread, {{"min", &f.min_us}, {"avg", &f.avg_us}, {"max", &f.max_us}});
  if (!numbers.ok()) return numbers;
  f.avg_us += 0.5;
  FillPercentiles(&f);
  return f;
}

// A sender/receiver tool's thread: receiver min, avg, max; sender samples.
absl::StatusOr<Figures> FromSenderReceiver(Figures f, const JsonValue& thread) {
  const absl::Status numbers =
      ReadNumbers(thread["receiver"],
                  {{"min", &f.min_us}, {"avg", &f.avg_us}, {"max", &f.max_us}});
  if (!numbers.ok()) return numbers;
  const absl::StatusOr<int64_t> samples = thread["sender"]["samples"].Integer();
  if (!samples.ok()) return samples.status();
  f.count = *samples;
  return f;
}

}  // namespace

std::string RtTestsTool(std::string_view tool) {
  return StrCat(FLAGS_rt_tests_dir, "/", tool);
}

absl::StatusOr<Figures> FiguresFromRtTestsJson(std::string name,
                                               const JsonValue& root) {
  Figures f;
  f.name = std::move(name);
  const JsonValue thread = root["thread"]["0"];
  if (!thread.exists()) return thread.status();
  if (thread["receiver"].exists())
    return FromSenderReceiver(std::move(f), thread);
  if (thread["histogram"].exists()) {
    // Every thread (cyclictest -t N), pooled.
    absl::StatusOr<std::vector<std::pair<std::string, JsonValue>>> threads =
        root["thread"].Members();
    if (!threads.ok()) return threads.status();
    std::vector<Figures> each;
    for (const auto& [key, value] : *threads) {
      absl::StatusOr<Figures> one = FromCyclictest(f, value);
      if (!one.ok()) return one.status();
      each.push_back(*std::move(one));
    }
    if (each.size() == 1) return each[0];
    // Weighted by each thread's samples; each average was raised by 0.5 us,
    // so the pooled one is too.
    return Merge(f.name, each);
  }
  return absl::InvalidArgumentError(StrCat(
      thread.source(), ": ", thread.path(),
      " holds neither a receiver (sigwaittest, ptsematest) nor a histogram "
      "(cyclictest -q --histogram=N)"));
}

absl::StatusOr<Figures> RunRtTest(std::string_view tool,
                                  std::vector<std::string> args,
                                  const std::string& work_dir) {
  return RtTestRun(tool, std::move(args), work_dir).Finish();
}

RtTestRun::RtTestRun(std::string_view tool, std::vector<std::string> args,
                     const std::string& work_dir)
    : tool_(tool) {
  static std::atomic<int> runs{0};
  json_path_ = StrCat(work_dir, "/", tool, ".", ++runs, ".json");
  args.push_back("--json=" + json_path_);
  process_ = std::make_unique<Subprocess>(RtTestsTool(tool), std::move(args),
                                          work_dir);
}

RtTestRun::~RtTestRun() = default;

pid_t RtTestRun::pid() const { return process_->pid(); }

absl::StatusOr<Figures> RtTestRun::Finish() {
  const int status = process_->Wait();
  if (status != 0) {
    return absl::InternalError(StrCat(RtTestsTool(tool_), " exited ", status,
                                      ": ", process_->Stderr()));
  }
  absl::StatusOr<JsonDocument> json = JsonDocument::ReadFile(json_path_);
  if (!json.ok()) {
    // cyclictest, for one, exits 0 after a usage message.
    return absl::InternalError(
        StrCat(RtTestsTool(tool_), " wrote no --json file (",
               json.status().message(), "); it said: ", process_->Stderr()));
  }
  absl::StatusOr<Figures> figures = FiguresFromRtTestsJson(tool_, json->root());
  std::remove(json_path_.c_str());
  return figures;
}

}  // namespace aos::bench
