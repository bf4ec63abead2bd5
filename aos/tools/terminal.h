#ifndef AOS_TOOLS_TERMINAL_H_
#define AOS_TOOLS_TERMINAL_H_

// What a tool that redraws a screen (the streamer's --top, aos_channels)
// needs to know of where its output goes: whether it is a terminal, so
// that ANSI codes go only there (not into a file or a pipe), and how wide
// and tall it is, so that rows fit and a redraw does not scroll.
//
//   const aos::Terminal terminal = aos::QueryTerminal(STDOUT_FILENO);
//   if (terminal.is_tty) std::cout << aos::kClearScreen;
//   ... fit rows to terminal.columns (0: unknown, do not fit) ...

#include <string_view>

namespace aos {

// Cursor home, then clear the screen (ANSI).
inline constexpr std::string_view kClearScreen = "\x1b[H\x1b[2J";

struct Terminal {
  // `fd` is a terminal (isatty).
  bool is_tty = false;
  // Its size in characters; 0 when unknown.
  int columns = 0;
  int rows = 0;
};

// For a terminal, its size from the kernel (TIOCGWINSZ), or where that
// says 0 (a serial line, some CI consoles), $COLUMNS and $LINES. For
// anything else, is_tty is false and the size is $COLUMNS and $LINES if
// they are set (a user may ask for a width in a file), else 0. Values that
// are not positive numbers below 100000 count as unset. Cheap (one ioctl):
// call it before each screen, so a resized window is followed.
Terminal QueryTerminal(int fd);

}  // namespace aos

#endif  // AOS_TOOLS_TERMINAL_H_
