#ifndef AOS_TESTING_ALLOCATION_COUNTER_H_
#define AOS_TESTING_ALLOCATION_COUNTER_H_

// Counts heap allocations, so tests can prove a realtime path allocates
// nothing:
//
//   const uint64_t before = aos::testing::HeapAllocations();
//   factory.RunFor(std::chrono::seconds(3));
//   EXPECT_EQ(aos::testing::HeapAllocations() - before, 0u);
//
// Linking //aos/testing:allocation_counter replaces the global operator new
// and new[] (plain and nothrow) of the whole test binary with counting
// versions over malloc. Aligned operator new is not replaced (nothing in aos
// uses it).

#include <cstdint>

namespace aos::testing {

// Heap allocations made through operator new/new[] by this process so far,
// in every thread.
uint64_t HeapAllocations();

}  // namespace aos::testing

#endif  // AOS_TESTING_ALLOCATION_COUNTER_H_
