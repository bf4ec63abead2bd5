#include "aos/tools/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace aos {
namespace {

// $name as a size, or 0.
int FromEnvironment(const char* name) {
  const char* value = getenv(name);
  if (value == nullptr) return 0;
  int parsed = 0;
  const char* end = value + strlen(value);
  const auto [rest, error] = std::from_chars(value, end, parsed);
  if (error != std::errc() || rest != end || parsed <= 0 || parsed >= 100000) {
    return 0;
  }
  return parsed;
}

}  // namespace

Terminal QueryTerminal(int fd) {
  Terminal terminal;
  terminal.is_tty = isatty(fd) == 1;
  if (terminal.is_tty) {
    winsize size{};
    if (ioctl(fd, TIOCGWINSZ, &size) == 0) {
      terminal.columns = size.ws_col;
      terminal.rows = size.ws_row;
    }
  }
  if (terminal.columns == 0) terminal.columns = FromEnvironment("COLUMNS");
  if (terminal.rows == 0) terminal.rows = FromEnvironment("LINES");
  return terminal;
}

}  // namespace aos
