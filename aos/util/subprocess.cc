#include "aos/util/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aos/util/exit_code.h"
#include "glog/logging.h"

extern char** environ;

namespace aos {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

Subprocess::Subprocess(const std::string& binary, std::vector<std::string> args,
                       const std::string& output_dir) {
  static std::atomic<int> counter{0};
  const std::string stem =
      output_dir + "/" + std::filesystem::path(binary).filename().string() +
      "." + std::to_string(getpid()) + "." + std::to_string(++counter);
  stdout_path_ = stem + ".out";
  stderr_path_ = stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  args.insert(args.begin(), binary);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int error = posix_spawn(&pid_, binary.c_str(), &actions, nullptr,
                                argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CHECK_EQ(error, 0) << "cannot start " << binary << ": " << strerror(error);
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

int Subprocess::Wait() {
  if (pid_ <= 0) return exit_status_;
  int status = 0;
  CHECK_EQ(waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  exit_status_ = ExitCodeOf(status);
  return exit_status_;
}

int Subprocess::Terminate() {
  // kill(-1, ...) would signal every process this user may signal.
  if (pid_ > 0) kill(pid_, SIGTERM);
  return Wait();
}

std::string Subprocess::Stdout() const { return ReadFile(stdout_path_); }
std::string Subprocess::Stderr() const { return ReadFile(stderr_path_); }

double Subprocess::CpuSeconds() const { return CpuSecondsOf(pid_); }

double CpuSecondsOf(pid_t pid) {
  const std::string text = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // The fields after the command name, which is in parentheses and may
  // hold spaces and parentheses itself.
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  // Fields 14 and 15 are utime and stime, in clock ticks; the first after
  // the name is field 3 (the state).
  unsigned long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stoull(field);
  }
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace aos
