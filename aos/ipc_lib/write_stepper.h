#ifndef AOS_IPC_LIB_WRITE_STEPPER_H_
#define AOS_IPC_LIB_WRITE_STEPPER_H_

// Runs an operation in a forked child and SIGKILLs it at a chosen step: just
// before its k-th store into a memory range, or after its k-th instruction.
// For tests that prove an operation on shared memory survives its process
// dying at any point.
//
// clang-format off
//   for (int64_t k = 0;; ++k) {
//     ... fresh shared memory ...
//     StepOutcome outcome = RunStepped(base, size, StepUnit::kStores, k,
//         [&] { /* not stepped: set up */ return [&] { /* stepped */ }; });
//     if (!outcome.error.empty()) FAIL() << outcome.error;
//     ... check the memory ...
//     if (!outcome.killed) break;   // k was past its last store
//   }
// clang-format on
//
// How: the child write-protects the range, so each store into it faults. The
// fault handler counts the store, and either kills the process (making the
// range writable first, as a real process's memory is when the kernel walks
// its robust lists) or lets exactly that one instruction through: it
// unprotects the range and sets the trap flag, and the trap that follows the
// instruction protects the range again. Between two stores the shared memory
// does not change, so a kill anywhere between them leaves exactly what a kill
// just before the second one leaves: stepping by stores covers every kill
// point there is, as far as the shared memory can tell. A failed
// compare-and-swap counts as a store (it is a write access).
//
// Costs a fork and two signals per store. x86-64 Linux only (the trap flag);
// elsewhere SteppingSupported() is false.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace aos::ipc_lib::testing {

enum class StepUnit {
  // kill_at = stores into the range done before the kill.
  kStores,
  // kill_at = instructions of the operation run before the kill (>= 1). The
  // operation runs with the trap flag set throughout: it must not make
  // system calls that care (plain code is fine).
  kInstructions,
};

struct StepOutcome {
  // Killed at the requested step; false when the operation finished first.
  bool killed = false;
  // Stores into the range (and, for kInstructions, instructions) done before
  // the kill, or in all if it finished.
  uint64_t stores = 0;
  uint64_t instructions = 0;
  // Non-empty when the child did something else (crashed, failed to set up).
  std::string error;
};

// The child's side: called in the child, unstepped; returns the operation,
// which is then run stepped. May _exit(non-zero) to say setting up failed.
using SteppedSetup = std::function<std::function<void()>()>;

// Forks; the child runs `setup`, write-protects the pages covering
// [begin, begin + size), runs the operation stepped by `unit`, and is killed
// once `kill_at` steps are done (kill_at < 0: never). The parent waits for
// it, at most kHangLimit (bounded_wait.h: then it is killed, and that is an
// error); the child dies with the parent. Returns what happened.
StepOutcome RunStepped(void* begin, size_t size, StepUnit unit, int64_t kill_at,
                       const SteppedSetup& setup);

bool SteppingSupported();

}  // namespace aos::ipc_lib::testing

#endif  // AOS_IPC_LIB_WRITE_STEPPER_H_
