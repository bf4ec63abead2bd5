#include "aos/events/allocation_guard.h"

#include <unistd.h>

#include <cstddef>
#include <cstdlib>

// A sanitizer's runtime owns malloc: GCC says so with __SANITIZE_*__, clang
// (before 17) only through __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AOS_SANITIZER_OWNS_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    defined(AOS_SANITIZER_OWNS_MALLOC)
#define AOS_ALLOCATION_GUARD 0
#else
#define AOS_ALLOCATION_GUARD 1
#endif

namespace aos {
namespace {

// initial-exec: the program's own static TLS, read without calling
// anything (a dynamic TLS access could itself allocate).
thread_local GuardedCallback* current_callback
    __attribute__((tls_model("initial-exec"))) = nullptr;

void Write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = write(STDERR_FILENO, text.data(), text.size());
    if (written <= 0) return;
    text.remove_prefix(static_cast<size_t>(written));
  }
}

// The decimal digits of `value`, without allocating.
void WriteNumber(size_t value) {
  char digits[24];
  size_t n = sizeof(digits);
  do {
    digits[--n] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  Write(std::string_view(digits + n, sizeof(digits) - n));
}

[[maybe_unused]] void OnGuardedAllocation(GuardedCallback* callback,
                                          size_t size) {
  if (callback->policy == AllocationPolicy::kCount) {
    ++callback->allocations;
    return;
  }
  current_callback = nullptr;  // abort() must not come back here.
  Write("event loop ");
  Write(callback->loop);
  Write(": ");
  Write(callback->kind);
  Write(" \"");
  Write(callback->name);
  Write("\"");
  if (!callback->type.empty()) {
    Write(" (");
    Write(callback->type);
    Write(")");
  }
  Write(" allocated ");
  WriteNumber(size);
  Write(
      " bytes while running at realtime priority; allocate during setup "
      "instead (or run with --die_on_malloc=false to only count it)\n");
  abort();
}

}  // namespace

ScopedAllocationGuard::ScopedAllocationGuard(GuardedCallback* callback)
    : previous_(current_callback) {
  current_callback = callback;
}

ScopedAllocationGuard::~ScopedAllocationGuard() {
  current_callback = previous_;
}

bool AllocationGuardAvailable() { return AOS_ALLOCATION_GUARD != 0; }

}  // namespace aos

#if AOS_ALLOCATION_GUARD
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);

void* malloc(size_t size) noexcept {
  if (__builtin_expect(aos::current_callback != nullptr, 0)) {
    aos::OnGuardedAllocation(aos::current_callback, size);
  }
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) noexcept {
  if (__builtin_expect(aos::current_callback != nullptr, 0)) {
    aos::OnGuardedAllocation(aos::current_callback, count * size);
  }
  return __libc_calloc(count, size);
}

void* realloc(void* pointer, size_t size) noexcept {
  if (__builtin_expect(aos::current_callback != nullptr, 0)) {
    aos::OnGuardedAllocation(aos::current_callback, size);
  }
  return __libc_realloc(pointer, size);
}
}  // extern "C"
#endif
