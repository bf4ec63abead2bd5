#ifndef AOS_EVENTS_ALLOCATION_GUARD_H_
#define AOS_EVENTS_ALLOCATION_GUARD_H_

// Catching heap allocations on the realtime path. While a
// ScopedAllocationGuard is active on a thread, every malloc, calloc and
// realloc on that thread (so every operator new and std::string growth)
// either aborts with one line naming the callback that was running, or is
// counted in it. Event loops put one around each timer, phased loop and
// watcher callback when they run at realtime priority (ShmEventLoop's
// --die_on_malloc); OnRun callbacks are setup and are not guarded.
//
//   GuardedCallback callback = {.loop = "ping", .kind = "timer",
//                               .name = "ping"};
//   {
//     ScopedAllocationGuard guard(&callback);
//     handler();   // allocating here aborts: event loop ping: timer "ping"
//   }              // allocated 24 bytes while running; ...
//
// How: this library defines malloc, calloc and realloc, which check the
// guard and forward to glibc's own allocator (__libc_malloc and friends), as
// glibc supports (ELF interposition); free, memalign and the aligned
// allocations are glibc's, untouched. Sanitizer builds own malloc, so there
// the guard does nothing: AllocationGuardAvailable() says so.
//
// Cost: one thread-local load per allocation; a guard is two thread-local
// stores. Nothing here allocates.

#include <cstdint>
#include <string_view>

namespace aos {

// What to do with an allocation inside a guarded callback.
enum class AllocationPolicy {
  // Print one line naming the callback and the size, then abort.
  kAbort,
  // Count it in GuardedCallback::allocations and go on.
  kCount,
};

// The callback running under a guard, as the abort message names it:
// `event loop <loop>: <kind> "<name>" [(<type>)] allocated N bytes`.
struct GuardedCallback {
  std::string_view loop;
  // "timer", "phased loop", "watcher".
  std::string_view kind;
  // The timer's name, or the watcher's channel.
  std::string_view name;
  // The watcher's message type; empty for timers.
  std::string_view type;
  AllocationPolicy policy = AllocationPolicy::kAbort;
  // Allocations seen under kCount.
  uint64_t allocations = 0;
};

// Guards the calling thread for its lifetime: allocations it makes are
// handled by `callback`'s policy. Nests (the inner guard wins until it
// ends). `callback` must outlive the guard.
class ScopedAllocationGuard {
 public:
  explicit ScopedAllocationGuard(GuardedCallback* callback);
  ~ScopedAllocationGuard();

  ScopedAllocationGuard(const ScopedAllocationGuard&) = delete;
  ScopedAllocationGuard& operator=(const ScopedAllocationGuard&) = delete;

 private:
  GuardedCallback* const previous_;
};

// False in sanitizer builds, where allocations are never caught.
bool AllocationGuardAvailable();

}  // namespace aos

#endif  // AOS_EVENTS_ALLOCATION_GUARD_H_
