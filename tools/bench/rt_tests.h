#ifndef TOOLS_BENCH_RT_TESTS_H_
#define TOOLS_BENCH_RT_TESTS_H_

// rt-tests (cyclictest, sigwaittest, ptsematest: the OS-level baselines) as
// a source of Figures: one runner that starts any of them with --json=FILE
// and reads the file, for every benchmark that compares itself with them.
//
// ```
//   absl::StatusOr<Figures> sigwait = RunRtTest(
//       "sigwaittest", {"-f", "-p80", "-i1000", "-l10000", "-q"}, work_dir);
// ```

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/util/json_document.h"
#include "aos/util/subprocess.h"
#include "gflags/gflags.h"
#include "tools/bench/bench_figures.h"

// Where the rt-tests tools are (Debian's rt-tests installs them in
// /usr/bin).
DECLARE_string(rt_tests_dir);

namespace aos::bench {

// The path of rt-tests tool `tool`: --rt_tests_dir/tool.
std::string RtTestsTool(std::string_view tool);

// The figures of an rt-tests --json file (rt-tests 2.x), named `name`, by
// the shape of what the tool measured:
// - cyclictest (`-q --histogram=N`): its histogram's 1 us classes, cycles,
//   min and max, of every thread pooled (bench_figures.h's Merge; one with
//   `-t N`). The file does not carry the histogram's overflows: they
//   are the cycles minus the histogram's sum. cyclictest truncates every
//   sample to whole microseconds, so its classes are read at their middle
//   and its average (exact to 0.01 us in the file) is raised by 0.5 us to
//   match: the same as the average of the classes' middles, and still right
//   when samples overflowed.
// - sigwaittest, ptsematest and the other sender/receiver tools: thread
//   "0"'s receiver's min, avg and max (avg to 0.01 us, where the tool's summary
//   line rounds to whole microseconds) and the sender's sample count; no
//   classes, so no percentiles.
// An error names the file and what is missing.
absl::StatusOr<Figures> FiguresFromRtTestsJson(std::string name,
                                               const JsonValue& root);

// Runs RtTestsTool(tool) with `args` and --json=FILE, FILE and the tool's
// output in `work_dir`; waits for it and returns FiguresFromRtTestsJson,
// named `tool`. An error says that the tool failed or wrote no file (with
// its exit status or stderr) or what its file lacks. Aborts if the tool cannot
// be started at all: check RtTestsTool(tool) first.
absl::StatusOr<Figures> RunRtTest(std::string_view tool,
                                  std::vector<std::string> args,
                                  const std::string& work_dir);

// The same, started now and read when Finish()ed, for a caller that
// measures the tool while it runs (its CPU time, by pid()).
class RtTestRun {
 public:
  // Starts RtTestsTool(tool) with `args` and --json=FILE in `work_dir`.
  // Aborts if it cannot be started at all.
  RtTestRun(std::string_view tool, std::vector<std::string> args,
            const std::string& work_dir);
  ~RtTestRun();
  RtTestRun(const RtTestRun&) = delete;
  RtTestRun& operator=(const RtTestRun&) = delete;

  pid_t pid() const;
  // Waits for the tool and reads its file, as RunRtTest. Once.
  absl::StatusOr<Figures> Finish();

 private:
  std::string tool_;
  std::string json_path_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace aos::bench

#endif  // TOOLS_BENCH_RT_TESTS_H_
