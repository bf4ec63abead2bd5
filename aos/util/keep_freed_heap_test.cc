#include "aos/util/keep_freed_heap.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace aos {
namespace {

// More than glibc's largest dynamic mmap threshold (32 MiB on 64 bits): by
// default a block this large is always mmapped, and unmapped when freed.
constexpr size_t kLargeBlock = 40u << 20;

// Allocates, touches and frees a large block; the allocator's figures while
// it was held and after it was freed.
struct Held {
  struct mallinfo2 during, after;
};
Held HoldLargeBlock() {
  Held held;
  void* block = malloc(kLargeBlock);
  EXPECT_NE(block, nullptr);
  memset(block, 1, kLargeBlock);
  held.during = mallinfo2();
  free(block);
  held.after = mallinfo2();
  return held;
}

TEST(KeepFreedHeapTest, LargeBlocksComeFromTheHeapAndStayAfterFree) {
  // Before: the block is mmapped, and gone when freed.
  const struct mallinfo2 start = mallinfo2();
  const Held before = HoldLargeBlock();
  if (before.during.hblkhd < start.hblkhd + kLargeBlock) {
    GTEST_SKIP() << "this allocator did not mmap a 40 MiB block (a "
                    "sanitizer's malloc?): glibc's behaviour is not here to "
                    "change";
  }
  EXPECT_LT(before.after.hblkhd, before.during.hblkhd);

  ASSERT_TRUE(KeepFreedHeap());
  ASSERT_TRUE(KeepFreedHeap()) << "a second call is accepted too";
  const struct mallinfo2 kept_start = mallinfo2();
  const Held kept = HoldLargeBlock();
  // From the heap, not mmap.
  EXPECT_EQ(kept.during.hblkhd, kept_start.hblkhd);
  EXPECT_GE(kept.during.arena, kept_start.arena + kLargeBlock);
  // Freed, but the heap was not trimmed: the next rise takes no faults.
  EXPECT_GE(kept.after.arena, kept_start.arena + kLargeBlock);
  EXPECT_GE(kept.after.fordblks, kLargeBlock);
}

}  // namespace
}  // namespace aos
