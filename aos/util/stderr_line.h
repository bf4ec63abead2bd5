#ifndef AOS_UTIL_STDERR_LINE_H_
#define AOS_UTIL_STDERR_LINE_H_

// One line on stderr without allocating, for code that runs inside
// realtime callbacks: a loop at realtime priority aborts on any heap
// allocation there (--die_on_malloc), and glog's LOG() allocates.
//
//   WriteStderrLine("ping: no pong in %d s: is pong running on %s?", 2,
//                   FLAGS_shm_base.c_str());
//
// The line is formatted into a stack buffer (at most 1023 bytes with its
// newline; longer text is cut) and written with one write(2), so lines of
// several threads or processes do not mix. A line that cannot be written
// is dropped. (aos/ipc_lib keeps its own copy, internal to it.)

#include <cstdarg>

namespace aos {

// printf-style; a newline is added.
void WriteStderrLine(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
void VWriteStderrLine(const char* format, va_list arguments)
    __attribute__((format(printf, 1, 0)));

}  // namespace aos

#endif  // AOS_UTIL_STDERR_LINE_H_
