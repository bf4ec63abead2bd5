#ifndef AOS_TRACING_RING_FILE_H_
#define AOS_TRACING_RING_FILE_H_

// Where event rings live: one file per loop,
// `<shm_base>/aos_trace/<node>.<application>.<pid>`, so that `aos_trace`
// finds every ring of the node in one directory.
//
//   absl::StatusOr<std::unique_ptr<EventRing>> ring =
//       CreateRingFile(shm_base, capacity, identity);
//   // ... the loop writes; the ring's file goes away with it.
//   for (const std::string& path : ListRingFiles(shm_base, &pruned)) {
//     absl::StatusOr<MappedRing> mapped = MapRing(path);
//   }

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/tracing/event_ring.h"

namespace aos::tracing {

// The directory of the rings under `shm_base`.
std::string RingDirectory(std::string_view shm_base);

// Creates (replacing a stale one) and maps the ring file of `identity`
// under `shm_base`, the directory made if missing, readable by all. The
// returned ring unmaps and removes the file when destroyed. An error names
// the path and the system's reason (unwritable directory, full tmpfs).
// Not for realtime paths (syscalls, allocation).
absl::StatusOr<std::unique_ptr<EventRing>> CreateRingFile(
    std::string_view shm_base, uint32_t capacity, const RingIdentity& identity);

// The ring files under `shm_base`, sorted. Files whose name ends in the pid
// of a process that no longer exists are removed (a loop that was killed)
// and counted in *pruned (may be null). A missing directory is no rings.
std::vector<std::string> ListRingFiles(std::string_view shm_base, int* pruned);

// A read-only mapping of a ring file; unmapped when destroyed.
class MappedRing {
 public:
  MappedRing(MappedRing&& other) noexcept;
  MappedRing& operator=(MappedRing&&) = delete;
  ~MappedRing();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  friend absl::StatusOr<MappedRing> MapRing(const std::string& path);
  MappedRing(const std::byte* data, size_t size) : data_(data), size_(size) {}

  const std::byte* data_;
  size_t size_;
};

// Maps `path` for reading; an error names the path and why.
absl::StatusOr<MappedRing> MapRing(const std::string& path);

}  // namespace aos::tracing

#endif  // AOS_TRACING_RING_FILE_H_
