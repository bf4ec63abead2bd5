#include "aos/util/keep_freed_heap.h"

#include <malloc.h>

namespace aos {

bool KeepFreedHeap() {
  // mallopt returns 1 on success. -1 turns trimming off; no mmapped chunks.
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, -1) == 1;
  const bool no_mmap = mallopt(M_MMAP_MAX, 0) == 1;
  return no_trim && no_mmap;
}

}  // namespace aos
