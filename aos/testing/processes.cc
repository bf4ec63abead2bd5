#include "aos/testing/processes.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "aos/util/scoped_fd.h"

namespace aos::testing {

bool HasOpenFile(pid_t pid, std::string_view path) {
  std::error_code error;
  const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& entry : std::filesystem::directory_iterator(fds, error)) {
    if (std::filesystem::read_symlink(entry.path(), error) == path) {
      return true;
    }
  }
  return false;
}

ChildResult RunAsNobody(const std::function<int()>& fn) {
  constexpr int kCannotDrop = 125;
  int output_pipe[2];
  if (pipe(output_pipe) != 0) {
    perror("aos::testing::RunAsNobody: pipe");
    abort();
  }
  ScopedFd read_end(output_pipe[0]);
  ScopedFd write_end(output_pipe[1]);
  fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    perror("aos::testing::RunAsNobody: fork");
    abort();
  }
  if (child == 0) {
    read_end.reset();
    dup2(write_end.get(), STDOUT_FILENO);
    dup2(write_end.get(), STDERR_FILENO);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(kCannotDrop);
    }
    const int code = fn();
    fflush(nullptr);
    _exit(code);
  }
  write_end.reset();  // So the read below ends when the child does.
  ChildResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = read(read_end.get(), buffer, sizeof(buffer))) > 0) {
    result.output.append(buffer, static_cast<size_t>(n));
  }
  read_end.reset();
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  if (result.exit_code == kCannotDrop) {
    result.skip_reason =
        "running as root and cannot become nobody (uid 65534), so file "
        "modes cannot deny anything here";
  }
  return result;
}

}  // namespace aos::testing
