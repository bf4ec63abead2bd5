#ifndef AOS_IPC_LIB_STDERR_LINE_H_
#define AOS_IPC_LIB_STDERR_LINE_H_

// One line on stderr from inside a send, read or wakeup, without
// allocating. Internal to ipc_lib.
//
//   WriteStderrLine("%s: message %llu in %s is corrupt: %s", ...);
//
// The queue's operations run inside event-loop callbacks, where a realtime
// loop aborts on any heap allocation (--die_on_malloc), and glog's LOG()
// allocates. What the queue has to say about damaged memory is formatted
// into a stack buffer (at most 1023 bytes; longer text is cut) and written
// with one write(2). A line that cannot be written is dropped.

#include "aos/ipc_lib/internal_only.h"

namespace aos::ipc_lib::internal {

// printf-style; a newline is added.
void WriteStderrLine(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_STDERR_LINE_H_
