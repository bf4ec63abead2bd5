#include "aos/util/priority_inheritance_mutex.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"

namespace aos {
namespace {

// It is a mutex: two threads adding under it lose no increment.
TEST(PriorityInheritanceMutexTest, Excludes) {
  PriorityInheritanceMutex mutex;
  int64_t count = 0;
  auto add = [&]() {
    for (int i = 0; i < 100000; ++i) {
      std::lock_guard<PriorityInheritanceMutex> lock(mutex);
      ++count;
    }
  };
  std::thread other(add);
  add();
  other.join();
  EXPECT_EQ(count, 200000);
}

// try_lock fails while another thread holds it.
TEST(PriorityInheritanceMutexTest, TryLockFailsWhileHeld) {
  PriorityInheritanceMutex mutex;
  std::unique_lock<PriorityInheritanceMutex> held(mutex);
  std::atomic<bool> got{true};
  std::thread other([&]() {
    got = mutex.try_lock();
    if (got) mutex.unlock();
  });
  other.join();
  EXPECT_FALSE(got);
  held.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

}  // namespace
}  // namespace aos
