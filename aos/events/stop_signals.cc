#include "aos/events/stop_signals.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "glog/logging.h"

namespace aos::internal {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGHUP, SIGTERM};

struct Slot {
  // Taken by a running loop.
  std::atomic<bool> active{false};
  // The signal that arrived for it, 0 if none.
  std::atomic<int> signal{0};
  // Made on first use, never closed.
  std::atomic<int> fd{-1};
};

Slot slots[StopSignals::kMaxRunning];

// Guards taking and giving back slots and the saved handlers; never taken
// in the signal handler.
std::mutex& Mutex() {
  static std::mutex mutex;
  return mutex;
}
int running = 0;
struct sigaction saved[3];

void OnStopSignal(int signal) {
  const int saved_errno = errno;
  for (Slot& slot : slots) {
    if (!slot.active.load(std::memory_order_acquire)) continue;
    slot.signal.store(signal, std::memory_order_release);
    const int fd = slot.fd.load(std::memory_order_acquire);
    const uint64_t one = 1;
    if (fd >= 0) {
      const ssize_t written = write(fd, &one, sizeof(one));
      (void)written;
    }
  }
  errno = saved_errno;
}

}  // namespace

std::unique_ptr<StopSignals> StopSignals::WhileRunning() {
  std::lock_guard<std::mutex> lock(Mutex());
  int taken = -1;
  for (int i = 0; i < kMaxRunning; ++i) {
    if (!slots[i].active.load(std::memory_order_relaxed)) {
      taken = i;
      break;
    }
  }
  CHECK_GE(taken, 0) << "more than " << kMaxRunning
                     << " event loops run at once in this process";
  Slot& slot = slots[taken];
  if (slot.fd.load(std::memory_order_relaxed) < 0) {
    const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    PCHECK(fd >= 0) << "eventfd for stop signals";
    slot.fd.store(fd, std::memory_order_release);
  }
  // Whatever a signal left for the slot's last user.
  uint64_t count;
  while (read(slot.fd.load(std::memory_order_relaxed), &count, sizeof(count)) >
         0) {
  }
  slot.signal.store(0, std::memory_order_relaxed);
  slot.active.store(true, std::memory_order_release);
  if (running++ == 0) {
    struct sigaction action = {};
    sigemptyset(&action.sa_mask);
    // A second signal finds the default action: Ctrl-C twice kills a
    // program whose loop is stuck in a handler.
    action.sa_flags = SA_RESETHAND;
    action.sa_handler = &OnStopSignal;
    for (int i = 0; i < 3; ++i) {
      PCHECK(sigaction(kStopSignals[i], &action, &saved[i]) == 0);
    }
  }
  return std::unique_ptr<StopSignals>(new StopSignals(taken));
}

StopSignals::~StopSignals() {
  std::lock_guard<std::mutex> lock(Mutex());
  slots[slot_].active.store(false, std::memory_order_release);
  if (--running == 0) {
    for (int i = 0; i < 3; ++i) {
      PCHECK(sigaction(kStopSignals[i], &saved[i], nullptr) == 0);
    }
  }
}

int StopSignals::fd() const {
  return slots[slot_].fd.load(std::memory_order_acquire);
}

int StopSignals::Take() {
  uint64_t count;
  while (read(fd(), &count, sizeof(count)) > 0) {
  }
  return slots[slot_].signal.exchange(0, std::memory_order_acq_rel);
}

}  // namespace aos::internal
