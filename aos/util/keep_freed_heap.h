#ifndef AOS_UTIL_KEEP_FREED_HEAP_H_
#define AOS_UTIL_KEEP_FREED_HEAP_H_

namespace aos {

// Tells glibc's malloc to keep what the process frees: the heap is never
// trimmed back to the OS, and large blocks come from the heap instead of
// mmap (whose free unmaps them). A process whose allocations rise and fall
// (a message bridge's DDS histories under a flood) then pays the page
// faults of its peak once, not again at every rise; with mlockall
// (MCL_FUTURE) each of those faults would also lock the page. The cost is
// memory: the process keeps its peak heap until it exits. AOS does the same
// before it locks a realtime process's memory.
//
// Process-wide and idempotent. glibc writes these settings without a lock
// for other threads to read: call it before other threads allocate much
// (concurrent calls of this are harmless). Returns false where the
// allocator refuses either setting (AddressSanitizer's malloc does), true
// otherwise.
bool KeepFreedHeap();

}  // namespace aos

#endif  // AOS_UTIL_KEEP_FREED_HEAP_H_
