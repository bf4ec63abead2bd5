#include "aos/ipc_lib/write_stepper.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/util/str_cat.h"

namespace aos::ipc_lib::testing {

#if defined(__x86_64__) && defined(__linux__)

namespace {

constexpr greg_t kTrapFlag = 0x100;

// What the child reports to the parent, in memory they share.
struct Report {
  uint64_t stores;
  uint64_t instructions;
  uint32_t finished;
};

// The child's stepping state, for its signal handlers. One child, one
// operation thread.
struct Stepping {
  char* begin;
  size_t size;
  StepUnit unit;
  int64_t kill_at;
  Report* report;
  bool reprotect;
};
Stepping stepping;

void Protect(bool writable) {
  mprotect(stepping.begin, stepping.size,
           writable ? PROT_READ | PROT_WRITE : PROT_READ);
}

[[noreturn]] void Die() {
  // Writable again, as any live process's mapping is: the kernel marks our
  // robust futex words in it as we die.
  Protect(true);
  kill(getpid(), SIGKILL);
  while (true) pause();
}

void OnFault(int, siginfo_t* info, void* context) {
  char* const address = static_cast<char*>(info->si_addr);
  if (address < stepping.begin || address >= stepping.begin + stepping.size) {
    // A real crash: let it happen (the parent reports the signal).
    signal(SIGSEGV, SIG_DFL);
    return;
  }
  if (stepping.unit == StepUnit::kStores &&
      static_cast<int64_t>(stepping.report->stores) == stepping.kill_at) {
    Die();
  }
  ++stepping.report->stores;
  // Let this one instruction store, then protect again (OnTrap).
  Protect(true);
  stepping.reprotect = true;
  static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
}

void OnTrap(int, siginfo_t*, void* context) {
  if (stepping.reprotect) {
    Protect(false);
    stepping.reprotect = false;
  }
  if (stepping.unit == StepUnit::kInstructions) {
    ++stepping.report->instructions;
    if (static_cast<int64_t>(stepping.report->instructions) ==
        stepping.kill_at) {
      Die();
    }
    return;  // The trap flag stays set: the next instruction traps too.
  }
  static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
}

void SetTrapFlag(bool on) {
  if (on) {
    asm volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
  } else {
    asm volatile("pushfq\n\tandq $~0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
  }
}

[[noreturn]] void RunChild(const SteppedSetup& setup) {
  const std::function<void()> operation = setup();
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_flags = SA_SIGINFO;
  action.sa_sigaction = OnFault;
  sigaction(SIGSEGV, &action, nullptr);
  action.sa_sigaction = OnTrap;
  sigaction(SIGTRAP, &action, nullptr);
  if (stepping.unit == StepUnit::kInstructions && stepping.kill_at == 0) {
    Die();
  }
  Protect(false);
  if (stepping.unit == StepUnit::kInstructions) {
    SetTrapFlag(true);
    operation();
    SetTrapFlag(false);
  } else {
    operation();
  }
  Protect(true);
  stepping.report->finished = 1;
  _exit(0);
}

}  // namespace

StepOutcome RunStepped(void* begin, size_t size, StepUnit unit, int64_t kill_at,
                       const SteppedSetup& setup) {
  StepOutcome outcome;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(begin) / page * page;
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(begin) + size + page - 1) / page * page;
  void* shared = mmap(nullptr, sizeof(Report), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    outcome.error = aos::StrCat("mmap: ", strerror(errno));
    return outcome;
  }
  Report* const report = new (shared) Report{};
  const pid_t child = ForkTestChild();
  if (child < 0) {
    outcome.error = aos::StrCat("fork: ", strerror(errno));
    munmap(shared, sizeof(Report));
    return outcome;
  }
  if (child == 0) {
    stepping = Stepping{reinterpret_cast<char*>(first),
                        end - first,
                        unit,
                        kill_at,
                        report,
                        false};
    RunChild(setup);
  }
  int status = 0;
  const std::string hung = WaitForChild(child, &status);
  outcome.stores = report->stores;
  outcome.instructions = report->instructions;
  if (!hung.empty()) {
    outcome.error = aos::StrCat("the stepped ", hung, ", after ",
                                report->stores, " stores");
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
             !report->finished) {
    outcome.killed = true;
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
               report->finished)) {
    outcome.error = aos::StrCat(
        "the stepped child ",
        WIFSIGNALED(status)
            ? aos::StrCat("died of signal ", WTERMSIG(status), " (",
                          strsignal(WTERMSIG(status)), ")")
            : aos::StrCat("exited with status ", WEXITSTATUS(status)),
        " after ", report->stores, " stores");
  }
  munmap(shared, sizeof(Report));
  return outcome;
}

bool SteppingSupported() { return true; }

#else

StepOutcome RunStepped(void*, size_t, StepUnit, int64_t, const SteppedSetup&) {
  StepOutcome outcome;
  outcome.error = "stepping needs x86-64 Linux";
  return outcome;
}

bool SteppingSupported() { return false; }

#endif

}  // namespace aos::ipc_lib::testing
