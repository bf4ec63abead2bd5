#include "aos/util/stderr_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace aos {

void VWriteStderrLine(const char* format, va_list arguments) {
  char line[1024];
  int length = vsnprintf(line, sizeof(line) - 1, format, arguments);
  if (length < 0) return;
  length = std::min(length, static_cast<int>(sizeof(line) - 2));
  line[length] = '\n';
  const ssize_t written = write(STDERR_FILENO, line, length + 1);
  (void)written;
}

void WriteStderrLine(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  VWriteStderrLine(format, arguments);
  va_end(arguments);
}

}  // namespace aos
