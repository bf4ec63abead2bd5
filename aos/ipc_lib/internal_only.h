#ifndef AOS_IPC_LIB_INTERNAL_ONLY_H_
#define AOS_IPC_LIB_INTERNAL_ONLY_H_

// Included by every header of aos/ipc_lib that is not its API, so that
// code outside the package cannot use them by accident: Bazel's gcc
// toolchain has no layering check, and a dependent of
// //aos/ipc_lib:lockless_queue can see every header the library compiles
// with. The BUILD file defines AOS_IPC_LIB_INTERNAL for the package's own
// libraries and, through //aos/ipc_lib:internal (visible only inside the
// package), for its tests.

#ifndef AOS_IPC_LIB_INTERNAL
// Outside aos/ipc_lib: depend on //aos/ipc_lib:lockless_queue instead.
#error "internal to aos/ipc_lib; use lockless_queue.h or queue_memory.h"
#endif

#endif  // AOS_IPC_LIB_INTERNAL_ONLY_H_
