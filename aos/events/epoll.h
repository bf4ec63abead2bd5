#ifndef AOS_EVENTS_EPOLL_H_
#define AOS_EVENTS_EPOLL_H_

// A minimal epoll loop: file descriptors with a callback each.
//
//   aos::internal::EPoll epoll;
//   epoll.OnReadable(timer_fd, [&]() { ... });
//   epoll.Run();          // until Quit()
//
// Registration allocates (do it during setup); Run() and callbacks do not.
// Not thread-safe, except Quit(), which any thread may call.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>

#include "aos/events/busy_poll_counters.h"
#include "aos/util/scoped_fd.h"

struct epoll_event;

namespace aos::internal {

class EPoll {
 public:
  EPoll();
  ~EPoll();
  EPoll(const EPoll&) = delete;
  EPoll& operator=(const EPoll&) = delete;

  // Calls `fn` whenever `fd` is readable (level triggered). `fd` stays
  // owned by the caller; remove it with Remove() before closing it.
  void OnReadable(int fd, std::function<void()> fn);
  void Remove(int fd);

  // Calls `fn` after the callbacks of every wakeup: once per epoll_wait
  // that returned events, after all of them were served (also when Quit()
  // cut the wakeup short). One at a time: replaces an earlier `fn`.
  void AfterEachWakeup(std::function<void()> fn) {
    after_each_wakeup_ = std::move(fn);
  }

  // After each wakeup's callbacks, keeps checking for events without
  // blocking for up to `window` before it blocks in epoll_wait: an event
  // that comes within the window is served without the thread going to
  // sleep, so without the wakeup of a CPU that went idle (which costs tens
  // of microseconds where idle CPUs halt). The window restarts after every
  // event caught. Zero (the default) blocks at once. The time spent
  // checking is CPU the loop burns; it is added to `*counters` (which must
  // outlive Run(); the owner resets it), with the wakeups it served.
  void SetBusyPoll(std::chrono::nanoseconds window,
                   BusyPollCounters* counters) {
    busy_poll_ = window;
    busy_poll_counters_ = counters;
  }

  // Waits for and dispatches events until Quit().
  void Run();
  // Makes Run() return after the callback being run. Thread-safe.
  void Quit();
  // Whether Quit() was called since Run() last returned (or ever, before
  // the first Run()): a callback that serves several things stops there.
  bool quitting() const { return quit_.load(std::memory_order_acquire); }

 private:
  // Checks for events without blocking until some come or the busy-poll
  // window passes (or Quit()): their count, 0 for none, or -1 (errno).
  int PollFor(struct epoll_event* events, int max_events);

  ScopedFd epoll_fd_;
  // Written by Quit() to wake epoll_wait.
  ScopedFd quit_fd_;
  std::atomic<bool> quit_{false};
  std::map<int, std::function<void()>> callbacks_;
  std::function<void()> after_each_wakeup_;
  std::chrono::nanoseconds busy_poll_{0};
  BusyPollCounters* busy_poll_counters_ = nullptr;
};

}  // namespace aos::internal

#endif  // AOS_EVENTS_EPOLL_H_
