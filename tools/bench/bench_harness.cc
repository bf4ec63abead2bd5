#include "tools/bench/bench_harness.h"

#include <errno.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "aos/util/str_cat.h"

namespace aos::bench {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return "";
  return line;
}

MachineInfo ReadMachineInfo() {
  MachineInfo machine;
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("model name")) {
        machine.cpu_model = line.substr(line.find(':') + 2);
        break;
      }
    }
  }
  machine.online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  machine.hardware_threads = std::thread::hardware_concurrency();
  utsname name;
  if (uname(&name) == 0) machine.kernel = name.release;
  machine.clocksource = ReadFirstLine(
      "/sys/devices/system/clocksource/clocksource0/current_clocksource");
  const std::string cpuidle = "/sys/devices/system/cpu/cpuidle/";
  machine.cpuidle_driver = ReadFirstLine(cpuidle + "current_driver");
  machine.cpuidle_governor = ReadFirstLine(cpuidle + "current_governor");
  machine.cpuidle_governor_ro = ReadFirstLine(cpuidle + "current_governor_ro");
  return machine;
}

std::string BenchPrograms::Path(std::string_view workspace_path) const {
  return StrCat(bin_dir_, "/", workspace_path);
}

std::unique_ptr<Subprocess> BenchPrograms::Start(
    std::string_view workspace_path, std::vector<std::string> args) const {
  return std::make_unique<Subprocess>(Path(workspace_path), std::move(args),
                                      output_dir_);
}

void FailWithOutput(std::string_view what, const Subprocess* process) {
  if (process != nullptr) {
    std::cerr << "--- stdout\n"
              << process->Stdout() << "\n--- stderr\n"
              << process->Stderr() << "\n";
  }
  std::cerr << program_invocation_short_name << ": " << what << "\n";
  exit(1);
}

void ExitUnlessSucceeded(Subprocess& process, std::string_view name) {
  const int status = process.Wait();
  if (status != 0) FailWithOutput(StrCat(name, " exited ", status), &process);
}

std::vector<std::string> MissingFiles(const std::vector<std::string>& files) {
  std::vector<std::string> missing;
  for (const std::string& file : files) {
    if (!std::filesystem::exists(file)) missing.push_back(file);
  }
  return missing;
}

double ProcessCpuSeconds(pid_t pid) {
  clockid_t clock;
  if (clock_getcpuclockid(pid, &clock) != 0) return NAN;
  timespec now;
  if (clock_gettime(clock, &now) != 0) return NAN;
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

bool AbbaSecondArm(int run) { return run % 4 == 1 || run % 4 == 2; }

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

double MedianOfMeasured(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(),
                              [](double value) { return std::isnan(value); }),
               values.end());
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle]
                                : (values[middle - 1] + values[middle]) / 2;
}

double SafeRatio(double a, double b) { return b > 0 ? a / b : NAN; }

std::string ThreeDigits(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  snprintf(text, sizeof(text),
           value < 10    ? "%.2f"
           : value < 100 ? "%.1f"
                         : "%.0f",
           value);
  return text;
}

std::string Fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

std::string RatioText(double ours, double theirs) {
  if (std::isnan(ours) || std::isnan(theirs) || theirs <= 0) return "-";
  char text[32];
  snprintf(text, sizeof(text), "%.2fx", ours / theirs);
  return text;
}

}  // namespace aos::bench
