#ifndef TOOLS_BENCH_BENCH_HARNESS_H_
#define TOOLS_BENCH_BENCH_HARNESS_H_

// What the benchmark drivers (latency_bench, bridge_bench) share: the
// machine they describe at the top of a run, the built programs they start
// and how a failed one ends the bench, the order of A/B runs, and how
// figures are printed.
//
//   const MachineInfo machine = ReadMachineInfo();
//   BenchPrograms programs("bazel-bin", work_dir);
//   auto ping = programs.Start("examples/ping", {"--sleep_us=1000"});
//   ExitUnlessSucceeded(*ping, "ping");   // prints its output, exit 1
//   for (int run = 0; run < 4; ++run) Measure(AbbaSecondArm(run));

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aos/util/subprocess.h"

namespace aos::bench {

// What a benchmark says about the machine it ran on. Fields a machine does
// not expose are empty.
struct MachineInfo {
  // /proc/cpuinfo's first "model name".
  std::string cpu_model;
  // CPUs online (sysconf) and the threads std::thread reports.
  long online_cpus = 0;
  unsigned hardware_threads = 0;
  // uname's release.
  std::string kernel;
  // The clocksource, and the cpuidle driver and governor, as sysfs says.
  std::string clocksource;
  std::string cpuidle_driver;
  std::string cpuidle_governor;
  std::string cpuidle_governor_ro;
};

// Reads the above. Never fails: what cannot be read stays empty.
MachineInfo ReadMachineInfo();

// The first line of the file at `path` (without its newline), or empty if
// it cannot be read or has no line.
std::string ReadFirstLine(const std::string& path);

// The programs of one build tree (`bin_dir`, e.g. bazel-bin), started with
// their output in `output_dir`.
class BenchPrograms {
 public:
  BenchPrograms(std::string bin_dir, std::string output_dir)
      : bin_dir_(std::move(bin_dir)), output_dir_(std::move(output_dir)) {}

  // The built file at `workspace_path` ("examples/ping").
  std::string Path(std::string_view workspace_path) const;
  // Starts Path(`workspace_path`) with `args` (aborts, naming it, if it
  // cannot be started: see Subprocess).
  std::unique_ptr<Subprocess> Start(std::string_view workspace_path,
                                    std::vector<std::string> args) const;

  const std::string& output_dir() const { return output_dir_; }

 private:
  std::string bin_dir_;
  std::string output_dir_;
};

// Ends the bench: `process`'s stdout and stderr (if not null) under
// "--- stdout" / "--- stderr" headings, then "<program>: <what>" on stderr,
// and exit status 1. For a measurement that cannot go on, not for a bug.
[[noreturn]] void FailWithOutput(std::string_view what,
                                 const Subprocess* process);

// Waits for `process`; unless it exited 0, FailWithOutput with
// "<name> exited <status>".
void ExitUnlessSucceeded(Subprocess& process, std::string_view name);

// Of `files` (paths), those that do not exist.
std::vector<std::string> MissingFiles(const std::vector<std::string>& files);

// The CPU time (user + system, every thread, those that ended too) the
// running process `pid` has used so far, in seconds to the nanosecond
// (clock_getcpuclockid), where /proc's ticks are 10 ms: a loop at 100 Hz
// uses less than that in a second. NaN if the process is gone or its clock
// cannot be read.
double ProcessCpuSeconds(pid_t pid);

// Whether run `run` (0, 1, 2, ...) of two alternating arms A and B is B,
// in the order A B B A A B B A ...: a machine that drifts during the bench
// weighs on both arms alike.
bool AbbaSecondArm(int run);

// The mean of `values` (NaN if there are none).
double Mean(const std::vector<double>& values);

// The median of `values` with NaNs (not measured) left out, NaN if none is
// left; of an even count, the mean of the middle two.
double MedianOfMeasured(std::vector<double> values);

// `a` / `b`, or NaN unless `b` > 0.
double SafeRatio(double a, double b);

// `value` with two decimals below 10, one below 100, none above; "-" for
// NaN ("4.37", "28.5", "102").
std::string ThreeDigits(double value);

// `value` with `digits` decimals; "-" for NaN.
std::string Fixed(double value, int digits = 1);

// "1.23x", `ours` / `theirs` with two decimals; "-" if either is NaN or
// `theirs` is not above 0.
std::string RatioText(double ours, double theirs);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_BENCH_HARNESS_H_
