#include "aos/events/epoll.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "glog/logging.h"

namespace aos::internal {

EPoll::EPoll() {
  epoll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
  PCHECK(epoll_fd_.valid()) << "epoll_create1";
  quit_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  PCHECK(quit_fd_.valid()) << "eventfd";
  OnReadable(quit_fd_.get(), [this]() {
    uint64_t value;
    while (read(quit_fd_.get(), &value, sizeof(value)) > 0) {
    }
  });
}

// The descriptors close as members.
EPoll::~EPoll() = default;

void EPoll::OnReadable(int fd, std::function<void()> fn) {
  CHECK(!callbacks_.contains(fd)) << "fd " << fd << " registered twice";
  struct epoll_event event = {};
  event.events = EPOLLIN;
  event.data.fd = fd;
  PCHECK(epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) == 0)
      << "epoll_ctl(ADD, " << fd << ")";
  callbacks_.emplace(fd, std::move(fn));
}

void EPoll::Remove(int fd) {
  if (callbacks_.erase(fd) == 0) return;
  PCHECK(epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr) == 0)
      << "epoll_ctl(DEL, " << fd << ")";
}

namespace {

int64_t MonotonicNs() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

}  // namespace

int EPoll::PollFor(struct epoll_event* events, int max_events) {
  const int64_t start = MonotonicNs();
  int64_t now = start;
  int count = 0;
  while (!quit_.load(std::memory_order_acquire) &&
         now - start < busy_poll_.count()) {
    count = epoll_wait(epoll_fd_.get(), events, max_events, 0);
    now = MonotonicNs();
    if (count != 0) break;
  }
  busy_poll_counters_->polling_ns += now - start;
  // Quit()'s own wakeup is not one the loop waited for.
  if (count > 0 && !quit_.load(std::memory_order_acquire)) {
    ++busy_poll_counters_->caught;
  }
  return count;
}

void EPoll::Run() {
  constexpr int kMaxEvents = 16;
  struct epoll_event events[kMaxEvents];
  // Polls only after a wakeup: Run() itself starts by waiting.
  bool woke = false;
  while (!quit_.load(std::memory_order_acquire)) {
    int count =
        woke && busy_poll_.count() > 0 ? PollFor(events, kMaxEvents) : 0;
    woke = true;
    if (count == 0) {
      count = epoll_wait(epoll_fd_.get(), events, kMaxEvents, -1);
    }
    if (count < 0) {
      PCHECK(errno == EINTR) << "epoll_wait";
      continue;
    }
    for (int i = 0; i < count; ++i) {
      auto it = callbacks_.find(events[i].data.fd);
      if (it != callbacks_.end()) it->second();
      if (quit_.load(std::memory_order_acquire)) break;
    }
    if (after_each_wakeup_) after_each_wakeup_();
  }
  quit_.store(false, std::memory_order_release);
}

void EPoll::Quit() {
  quit_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  // Best effort: a full counter still wakes epoll.
  (void)!write(quit_fd_.get(), &one, sizeof(one));
}

}  // namespace aos::internal
