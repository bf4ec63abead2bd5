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
#include <functional>
#include <map>

#include "aos/util/scoped_fd.h"

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

  // Waits for and dispatches events until Quit().
  void Run();
  // Makes Run() return after the callback being run. Thread-safe.
  void Quit();
  // Whether Quit() was called since Run() last returned (or ever, before
  // the first Run()): a callback that serves several things stops there.
  bool quitting() const { return quit_.load(std::memory_order_acquire); }

 private:
  ScopedFd epoll_fd_;
  // Written by Quit() to wake epoll_wait.
  ScopedFd quit_fd_;
  std::atomic<bool> quit_{false};
  std::map<int, std::function<void()>> callbacks_;
  std::function<void()> after_each_wakeup_;
};

}  // namespace aos::internal

#endif  // AOS_EVENTS_EPOLL_H_
