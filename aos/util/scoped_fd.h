#ifndef AOS_UTIL_SCOPED_FD_H_
#define AOS_UTIL_SCOPED_FD_H_

// ScopedFd owns one file descriptor and closes it when it goes away, so a
// descriptor is closed exactly once on every path out of a scope (early
// returns included) and an owner class needs no destructor of its own.
//
//   aos::ScopedFd fd(open(path, O_RDONLY | O_CLOEXEC));
//   if (!fd.valid()) return absl::ErrnoToStatus(errno, path);
//   read(fd.get(), buffer, size);
//   ...  // closed here, whichever way the scope is left
//
// A negative value means "owns nothing" (what open(2) and friends return on
// failure), so the result of a call that makes a descriptor goes straight in.
// ScopedFd is move-only: moving transfers ownership and leaves the source
// empty. It costs one int and never allocates, so it may live in realtime
// paths. Close errors are ignored, as by every destructor; where a close
// error matters (a file just written), call Close() and check it.
//
// Not thread-safe: one owner at a time, like the descriptor itself.

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace aos {

class ScopedFd {
 public:
  // Owns nothing.
  ScopedFd() = default;
  // Takes ownership of fd; a negative fd means nothing is owned.
  explicit ScopedFd(int fd) : fd_(fd < 0 ? -1 : fd) {}

  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  // Closes what this owned, then takes what other owned.
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  ~ScopedFd() { reset(); }

  // The descriptor, still owned (-1 when none). Never close() it.
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing: returns the descriptor (-1 when
  // none) and leaves this empty. The caller now closes it.
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }

  // Closes what this owned (if anything) and takes fd (negative: nothing).
  // Resetting to the descriptor already owned is a programming error that
  // would close it under its new owner; it is not checked.
  void reset(int fd = -1) {
    const int old = std::exchange(fd_, fd < 0 ? -1 : fd);
    if (old >= 0) {
      // Linux releases the descriptor even when close() fails (EINTR
      // included), so it is never retried: a retry could close a
      // descriptor another thread just opened under the same number.
      const int saved_errno = errno;
      ::close(old);
      errno = saved_errno;
    }
  }

  // Closes now and reports the result: 0, or -1 with errno set as close(2)
  // sets it. Either way this is empty afterwards. Closing an empty ScopedFd
  // returns 0.
  int Close() {
    const int old = release();
    return old < 0 ? 0 : ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace aos

#endif  // AOS_UTIL_SCOPED_FD_H_
