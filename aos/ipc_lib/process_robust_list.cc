#include "aos/ipc_lib/process_robust_list.h"

#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos::ipc_lib::internal {
namespace {

static_assert(kRobustEntryOffset == sizeof(std::atomic<uint64_t>),
              "the link is the word right after the owner word");

// The link word of a claimed word.
std::atomic<uint64_t>* LinkOf(std::atomic<uint64_t>* word) { return word + 1; }
robust_list* EntryOf(std::atomic<uint64_t>* word) {
  return reinterpret_cast<robust_list*>(LinkOf(word));
}

// The owner thread's stack: it only registers the list and sleeps.
constexpr size_t kOwnerThreadStack = 128 * 1024;

struct State {
  std::mutex mutex;
  // The process `list`, `head` and `words` belong to; 0 before first use. A
  // forked child sees its parent's pid here and starts over.
  pid_t pid = 0;
  uint32_t id = 0;
  // Registered by the owner thread. The kernel's list runs
  // head -> newest word -> ... -> oldest word -> head.
  robust_list_head head;
  // The listed words, oldest first: our own record of the list, so that we
  // never follow the links in shared memory.
  std::vector<std::atomic<uint64_t>*> words;
  // The owner thread's report: set_robust_list's errno and its tid.
  sem_t started;
  int register_error = 0;
  uint32_t thread_id = 0;

  // The word whose link points at the entry after words[i] (towards the
  // head), i.e. what the kernel's walk reads to get from its predecessor.
  void SetNextOfPredecessor(size_t i, robust_list* next) {
    if (i + 1 == words.size()) {
      __atomic_store_n(&head.list.next, next, __ATOMIC_SEQ_CST);
    } else {
      LinkOf(words[i + 1])
          ->store(reinterpret_cast<uint64_t>(next), std::memory_order_seq_cst);
    }
  }

  void Link(std::atomic<uint64_t>* word) {
    robust_list* const first =
        words.empty() ? &head.list : EntryOf(words.back());
    LinkOf(word)->store(reinterpret_cast<uint64_t>(first),
                        std::memory_order_seq_cst);
    __atomic_store_n(&head.list.next, EntryOf(word), __ATOMIC_SEQ_CST);
    words.push_back(word);
  }

  // One store takes words[i] out of the kernel's list.
  void Unlink(size_t i) {
    robust_list* const after = i == 0 ? &head.list : EntryOf(words[i - 1]);
    SetNextOfPredecessor(i, after);
    words.erase(words.begin() + static_cast<ptrdiff_t>(i));
  }

  std::optional<size_t> Find(std::atomic<uint64_t>* word) const {
    const auto it = std::find(words.begin(), words.end(), word);
    if (it == words.end()) return std::nullopt;
    return static_cast<size_t>(it - words.begin());
  }

  void SetPending(std::atomic<uint64_t>* word) {
    __atomic_store_n(&head.list_op_pending,
                     word == nullptr ? nullptr : EntryOf(word),
                     __ATOMIC_SEQ_CST);
  }
};

State& state() {
  static State* const instance = [] {
    State* s = new State;  // Never destroyed: the kernel reads it at exit.
    sem_init(&s->started, 0, 0);
    // A child forked while another thread held the mutex would otherwise
    // inherit it locked.
    pthread_atfork([] { state().mutex.lock(); }, [] { state().mutex.unlock(); },
                   [] { state().mutex.unlock(); });
    return s;
  }();
  return *instance;
}

}  // namespace

absl::StatusOr<uint32_t> RobustListId() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const pid_t pid = getpid();
  if (s.pid == pid) return s.id;
  // First use in this process. In a forked child, the parent's words are not
  // ours and its owner thread did not come along: start afresh (never
  // touching the parent's links in shared memory).
  s.words.clear();
  s.head.list.next = &s.head.list;
  s.head.futex_offset = -static_cast<long>(kRobustEntryOffset);
  s.head.list_op_pending = nullptr;
  s.register_error = 0;
  s.thread_id = 0;

  // Blocked in the new thread from its first instruction, so that no
  // process-directed signal (SIGTERM, a wakeup) is ever delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, kOwnerThreadStack);
  void* (*const owner_thread)(void*) = [](void* argument) -> void* {
    State* const state = static_cast<State*>(argument);
    state->register_error =
        syscall(SYS_set_robust_list, &state->head, sizeof(state->head)) == 0
            ? 0
            : errno;
    state->thread_id = static_cast<uint32_t>(gettid());
    const bool registered = state->register_error == 0;
    sem_post(&state->started);
    if (!registered) return nullptr;
    // Every signal is blocked (inherited from the creator), so this sleeps
    // until the process dies; then the kernel walks our list.
    while (true) pause();
  };
  pthread_t thread;
  int error = pthread_create(&thread, &attributes, owner_thread, &s);
  if (error == EINVAL) {
    // Our small stack does not fit this process's thread-local storage.
    pthread_attr_setstacksize(&attributes, 8 * 1024 * 1024);
    error = pthread_create(&thread, &attributes, owner_thread, &s);
  }
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (error != 0) {
    return absl::ResourceExhaustedError(aos::StrCat(
        "cannot start the thread that marks this process's shared memory "
        "slots when it dies: pthread_create: ",
        strerror(error)));
  }
  pthread_setname_np(thread, "aos_robust_list");
  while (sem_wait(&s.started) != 0 && errno == EINTR) {
  }
  if (s.register_error != 0) {
    return absl::UnavailableError(
        aos::StrCat("set_robust_list failed (", strerror(s.register_error),
                    "): this kernel cannot mark the slots of dead processes"));
  }
  s.id = s.thread_id;
  s.pid = pid;
  return s.id;
}

bool ClaimListed(std::atomic<uint64_t>* word, uint64_t& expected,
                 uint64_t desired) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.pid != getpid()) return false;  // Get() was not called here.
  const bool listed = s.Find(word).has_value();
  if (!listed && s.words.size() >= kMaxOwnedWords) return false;
  // Killed after the CAS but before the word is linked, the kernel still
  // looks at the pending word.
  s.SetPending(word);
  const bool claimed = word->compare_exchange_strong(
      expected, desired, std::memory_order_seq_cst, std::memory_order_acquire);
  if (claimed && !listed) s.Link(word);
  s.SetPending(nullptr);
  return claimed;
}

bool ReleaseListed(std::atomic<uint64_t>* word, uint64_t owner) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  // A forked child owns none of its parent's words (which hold its parent's
  // id, not ours).
  if (s.pid != getpid() || static_cast<uint32_t>(owner) != s.id) return false;
  uint64_t expected = owner;
  // Freed first, unlinked second: killed in between, the kernel finds a word
  // that no longer holds our id and leaves it alone.
  const bool freed = word->compare_exchange_strong(
      expected, 0, std::memory_order_seq_cst, std::memory_order_acquire);
  if (freed || static_cast<uint32_t>(expected) != s.id) {
    if (const std::optional<size_t> i = s.Find(word)) s.Unlink(*i);
  }
  return freed;
}

void ReleaseAllListedIn(const void* begin, const void* end) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.pid != getpid()) return;  // A forked child owns none of these.
  const auto* const low = static_cast<const char*>(begin);
  const auto* const high = static_cast<const char*>(end);
  for (size_t i = s.words.size(); i-- > 0;) {
    const auto* const address = reinterpret_cast<const char*>(s.words[i]);
    if (address < low || address >= high) continue;
    uint64_t current = s.words[i]->load(std::memory_order_acquire);
    if (static_cast<uint32_t>(current) == s.id) {
      s.words[i]->compare_exchange_strong(current, 0,
                                          std::memory_order_seq_cst);
    }
    s.Unlink(i);
  }
}

size_t ListedWords() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.words.size();
}

}  // namespace aos::ipc_lib::internal
