#include "aos/events/epoll.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "aos/util/scoped_fd.h"
#include "gtest/gtest.h"

namespace aos::internal {
namespace {

// An eventfd: readable once Signal()ed, until Drain()ed.
class Event {
 public:
  Event() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  int fd() const { return fd_.get(); }
  void Signal() {
    const uint64_t one = 1;
    ASSERT_EQ(write(fd(), &one, sizeof(one)), 8);
  }
  void Drain() {
    uint64_t value;
    ASSERT_EQ(read(fd(), &value, sizeof(value)), 8);
  }

 private:
  ScopedFd fd_;
};

// Runs `epoll` over two events, A then B: A's callback makes B ready (after
// the epoll_wait that reported A), and B's ends Run(). Returns the number of
// wakeups.
int RunChainOfTwo(EPoll* epoll) {
  Event a, b;
  int wakeups = 0;
  epoll->AfterEachWakeup([&]() { ++wakeups; });
  epoll->OnReadable(a.fd(), [&]() {
    a.Drain();
    b.Signal();
  });
  epoll->OnReadable(b.fd(), [&]() {
    b.Drain();
    epoll->Quit();
  });
  a.Signal();
  epoll->Run();
  epoll->Remove(a.fd());
  epoll->Remove(b.fd());
  epoll->AfterEachWakeup(nullptr);
  return wakeups;
}

// With a window, B is served by the busy poll that follows A's wakeup, not
// by a blocking wait; without one, nothing is polled.
TEST(EPollTest, BusyPollServesWhatComesAfterAWakeup) {
  for (const std::chrono::nanoseconds window :
       {std::chrono::nanoseconds(std::chrono::seconds(10)),
        std::chrono::nanoseconds(0)}) {
    EPoll epoll;
    BusyPollCounters counters;
    epoll.SetBusyPoll(window, &counters);
    EXPECT_EQ(RunChainOfTwo(&epoll), 2);
    EXPECT_EQ(counters.caught, window.count() > 0 ? 1u : 0u);
    if (window.count() == 0) {
      EXPECT_EQ(counters.polling_ns, 0u);
    }
  }
}

// A window far longer than the test still ends at Quit(), and the time it
// polled is counted.
TEST(EPollTest, QuitEndsABusyPoll) {
  EPoll epoll;
  BusyPollCounters counters;
  epoll.SetBusyPoll(std::chrono::hours(1), &counters);
  Event a;
  bool served = false;
  std::thread quitter;
  // Started once Run() serves A, so Quit() comes during the poll after it.
  epoll.OnReadable(a.fd(), [&]() {
    a.Drain();
    served = true;
    quitter = std::thread([&]() {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      epoll.Quit();
    });
  });
  a.Signal();
  epoll.Run();
  quitter.join();
  EXPECT_TRUE(served);
  EXPECT_GT(counters.polling_ns, 0u);
  EXPECT_EQ(counters.caught, 0u);
  epoll.Remove(a.fd());
}

}  // namespace
}  // namespace aos::internal
