#ifndef AOS_UTIL_PRIORITY_INHERITANCE_MUTEX_H_
#define AOS_UTIL_PRIORITY_INHERITANCE_MUTEX_H_

// A mutex whose holder inherits the priority of the highest-priority thread
// waiting for it (PTHREAD_PRIO_INHERIT): a realtime thread that waits for a
// lock a normal-priority thread holds waits for that thread's critical
// section only, not also for every normal thread the scheduler would
// otherwise run first. For locks a realtime loop shares with another thread
// (a network library's receive thread), where std::mutex would let the
// loop wait without bound.
//
//   PriorityInheritanceMutex mutex;
//   std::lock_guard<PriorityInheritanceMutex> lock(mutex);
//
// Meets the standard's Lockable requirements; never allocates.

#include <pthread.h>

#include "glog/logging.h"

namespace aos {

class PriorityInheritanceMutex {
 public:
  PriorityInheritanceMutex() {
    pthread_mutexattr_t attributes;
    PCHECK(pthread_mutexattr_init(&attributes) == 0);
    CHECK_EQ(pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT),
             0);
    CHECK_EQ(pthread_mutex_init(&mutex_, &attributes), 0);
    pthread_mutexattr_destroy(&attributes);
  }
  ~PriorityInheritanceMutex() { pthread_mutex_destroy(&mutex_); }

  PriorityInheritanceMutex(const PriorityInheritanceMutex&) = delete;
  PriorityInheritanceMutex& operator=(const PriorityInheritanceMutex&) = delete;

  void lock() { CHECK_EQ(pthread_mutex_lock(&mutex_), 0); }
  bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() { CHECK_EQ(pthread_mutex_unlock(&mutex_), 0); }

 private:
  pthread_mutex_t mutex_;
};

}  // namespace aos

#endif  // AOS_UTIL_PRIORITY_INHERITANCE_MUTEX_H_
