#include "aos/ipc_lib/stderr_line.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace aos::ipc_lib::internal {

void WriteStderrLine(const char* format, ...) {
  char line[1024];
  va_list arguments;
  va_start(arguments, format);
  int length = vsnprintf(line, sizeof(line) - 1, format, arguments);
  va_end(arguments);
  if (length < 0) return;
  if (static_cast<size_t>(length) > sizeof(line) - 2) {
    length = static_cast<int>(sizeof(line) - 2);
  }
  line[length] = '\n';
  const ssize_t written = write(STDERR_FILENO, line, length + 1);
  (void)written;
}

}  // namespace aos::ipc_lib::internal
