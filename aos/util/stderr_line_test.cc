#include "aos/util/stderr_line.h"

#include <unistd.h>

#include <string>

#include "aos/util/scoped_fd.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

// What the calls in `write_lines` put on stderr.
template <typename Fn>
std::string Captured(Fn write_lines) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  const ScopedFd read_end(pipe_fds[0]);
  ScopedFd write_end(pipe_fds[1]);
  {
    const ScopedFd saved(dup(STDERR_FILENO));
    dup2(write_end.get(), STDERR_FILENO);
    write_lines();
    dup2(saved.get(), STDERR_FILENO);
  }
  write_end.reset();  // So the read below ends.
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(read_end.get(), buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

TEST(StderrLineTest, WritesOneFormattedLine) {
  EXPECT_EQ(Captured([] { WriteStderrLine("ping: %d pongs on %s", 3, "/x"); }),
            "ping: 3 pongs on /x\n");
}

TEST(StderrLineTest, CutsLongLinesAndKeepsTheNewline) {
  const std::string text =
      Captured([] { WriteStderrLine("%s", std::string(5000, 'x').c_str()); });
  EXPECT_EQ(text, std::string(1022, 'x') + "\n");
}

}  // namespace
}  // namespace aos
