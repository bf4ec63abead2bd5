#ifndef AOS_IPC_LIB_BOUNDED_WAIT_H_
#define AOS_IPC_LIB_BOUNDED_WAIT_H_

// Waiting in tests without hanging: for threads and forked children that a
// test waits for, when a failure (an ASSERT that returned early, a child
// that died or never started) could leave the test waiting forever.
//
// clang-format off
//   const pid_t child = ForkTestChild();   // dies with the test process
//   if (child == 0) { ...; _exit(0); }
//   int status;
//   ASSERT_EQ(WaitForChild(child, &status), "");
//
//   HangGuard guard;
//   while (!done()) {
//     if (guard.Expired()) { ADD_FAILURE() << "...never ..."; break; }
//     std::this_thread::yield();
//   }
// clang-format on
//
// The limit only ends a hang: every wait it bounds is for something a
// working queue does at once, so no test asserts how fast anything is.

#include <sys/types.h>

#include <chrono>
#include <string>

namespace aos::ipc_lib::testing {

// How long a test waits for what a working queue does at once (a thread or
// child registering, sending, finishing) before it fails saying so.
inline constexpr std::chrono::seconds kHangLimit{60};

// Ends a wait that would otherwise last forever.
class HangGuard {
 public:
  HangGuard() : deadline_(std::chrono::steady_clock::now() + kHangLimit) {}
  // Whether kHangLimit has passed since construction. Cheap (a vDSO clock
  // read): check it on every pass of a waiting loop.
  bool Expired() const { return std::chrono::steady_clock::now() > deadline_; }

 private:
  const std::chrono::steady_clock::time_point deadline_;
};

// fork(), but the child is SIGKILLed when the thread that forked it exits
// (PR_SET_PDEATHSIG), so that a test that fails or crashes never leaves a
// child behind (a leftover child holding the test's output open keeps Bazel
// waiting). Returns what fork() returns. In the child, uses only
// async-signal-safe calls.
pid_t ForkTestChild();

// Waits for `child` to end, at most kHangLimit (after which it is
// SIGKILLed and reaped). Returns "" and its wait status in *status, or what
// went wrong.
std::string WaitForChild(pid_t child, int* status);

}  // namespace aos::ipc_lib::testing

#endif  // AOS_IPC_LIB_BOUNDED_WAIT_H_
