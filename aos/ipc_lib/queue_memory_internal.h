#ifndef AOS_IPC_LIB_QUEUE_MEMORY_INTERNAL_H_
#define AOS_IPC_LIB_QUEUE_MEMORY_INTERNAL_H_

// Pieces of queue_memory.cc exposed for its tests. Not for other users.

#include <chrono>

#include "aos/ipc_lib/internal_only.h"

namespace aos::ipc_lib::internal {

// How long QueueMemory::Open waits for a file's creator to finish (1 s).
// For fuzzing, where files with damaged markers are the common case.
void SetInitialisationTimeoutForTesting(std::chrono::milliseconds timeout);

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_QUEUE_MEMORY_INTERNAL_H_
