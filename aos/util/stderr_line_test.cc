#include "aos/util/stderr_line.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace aos {
namespace {

// What the calls in `write_lines` put on stderr.
template <typename Fn>
std::string Captured(Fn write_lines) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  const int saved = dup(STDERR_FILENO);
  dup2(pipe_fds[1], STDERR_FILENO);
  write_lines();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  return text;
}

TEST(StderrLineTest, WritesOneFormattedLine) {
  EXPECT_EQ(Captured([] { WriteStderrLine("ping: %d pongs on %s", 3, "/x"); }),
            "ping: 3 pongs on /x\n");
}

TEST(StderrLineTest, CutsLongLinesAndKeepsTheNewline) {
  const std::string text = Captured(
      [] { WriteStderrLine("%s", std::string(5000, 'x').c_str()); });
  EXPECT_EQ(text, std::string(1022, 'x') + "\n");
}

}  // namespace
}  // namespace aos
