// Where a tool's screen goes: a terminal's size from the kernel, $COLUMNS
// where it says nothing, and no terminal for a pipe.
#include "aos/tools/terminal.h"

#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "aos/util/scoped_fd.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(TerminalTest, APseudoTerminalHasItsWindowSize) {
  int controller = -1;
  int terminal_fd = -1;
  winsize size{};
  size.ws_col = 80;
  size.ws_row = 24;
  ASSERT_EQ(openpty(&controller, &terminal_fd, nullptr, nullptr, &size), 0);
  const ScopedFd controller_owner(controller);
  const ScopedFd terminal_owner(terminal_fd);
  setenv("COLUMNS", "200", 1);
  const Terminal terminal = QueryTerminal(terminal_fd);
  EXPECT_TRUE(terminal.is_tty);
  EXPECT_EQ(terminal.columns, 80);
  EXPECT_EQ(terminal.rows, 24);
  // A terminal that does not know its size: $COLUMNS.
  size.ws_col = 0;
  size.ws_row = 0;
  ASSERT_EQ(ioctl(terminal_fd, TIOCSWINSZ, &size), 0);
  setenv("LINES", "50", 1);
  EXPECT_EQ(QueryTerminal(terminal_fd).columns, 200);
  EXPECT_EQ(QueryTerminal(terminal_fd).rows, 50);
  unsetenv("COLUMNS");
  unsetenv("LINES");
}

TEST(TerminalTest, APipeIsNoTerminal) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const ScopedFd read_end(fds[0]);
  const ScopedFd write_end(fds[1]);
  unsetenv("COLUMNS");
  Terminal terminal = QueryTerminal(fds[1]);
  EXPECT_FALSE(terminal.is_tty);
  EXPECT_EQ(terminal.columns, 0);
  setenv("COLUMNS", "100", 1);
  EXPECT_EQ(QueryTerminal(fds[1]).columns, 100);
  EXPECT_FALSE(QueryTerminal(fds[1]).is_tty);
  for (const char* bad : {"", "-3", "abc", "12x", "999999"}) {
    setenv("COLUMNS", bad, 1);
    EXPECT_EQ(QueryTerminal(fds[1]).columns, 0) << bad;
  }
  unsetenv("COLUMNS");
}

}  // namespace
}  // namespace aos
