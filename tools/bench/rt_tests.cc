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
  if (thread["histogram"].exists()) return FromCyclictest(std::move(f), thread);
  return absl::InvalidArgumentError(StrCat(
      thread.source(), ": ", thread.path(),
      " holds neither a receiver (sigwaittest, ptsematest) nor a histogram "
      "(cyclictest -q --histogram=N)"));
}

absl::StatusOr<Figures> RunRtTest(std::string_view tool,
                                  std::vector<std::string> args,
                                  const std::string& work_dir) {
  static std::atomic<int> runs{0};
  const std::string json_path =
      StrCat(work_dir, "/", tool, ".", ++runs, ".json");
  args.push_back("--json=" + json_path);
  Subprocess process(RtTestsTool(tool), std::move(args), work_dir);
  const int status = process.Wait();
  if (status != 0) {
    return absl::InternalError(
        StrCat(RtTestsTool(tool), " exited ", status, ": ", process.Stderr()));
  }
  absl::StatusOr<JsonDocument> json = JsonDocument::ReadFile(json_path);
  if (!json.ok()) {
    // cyclictest, for one, exits 0 after a usage message.
    return absl::InternalError(
        StrCat(RtTestsTool(tool), " wrote no --json file (",
               json.status().message(), "); it said: ", process.Stderr()));
  }
  absl::StatusOr<Figures> figures =
      FiguresFromRtTestsJson(std::string(tool), json->root());
  std::remove(json_path.c_str());
  return figures;
}

}  // namespace aos::bench
