#ifndef AOS_TRACING_SNAPSHOT_FILES_H_
#define AOS_TRACING_SNAPSHOT_FILES_H_

// What `aos_trace` reads and writes: every ring of a node now, and the
// snapshot files of a directory (`aos_trace.<monotonic ns>[.<node>].json`,
// so that names sort by time).
//
//   NodeRings rings = ReadNodeRings(ShmBase());
//   absl::StatusOr<std::string> path = WriteSnapshot(dir, trace, now_ns);
//
// Not for realtime paths: files, allocation.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/ring_reader.h"

namespace aos::tracing {

struct NodeRings {
  std::vector<RingCopy> rings;
  // "<path>: <why>" for each ring that could not be read (damaged, another
  // layout version): skipped, never fatal.
  std::vector<std::string> skipped;
  // Ring files of dead processes removed.
  int pruned = 0;
};

// Copies every ring under `shm_base` (ring_file.h).
NodeRings ReadNodeRings(std::string_view shm_base);

// Writes `trace` as `<directory>/aos_trace.<stamp_ns>.json`, or
// `aos_trace.<stamp_ns>.<node>.json` for a node of a multi-node system (two
// nodes' snapshots of one moment in one directory), through a
// temporary file renamed into place, so a reader never sees half a
// snapshot); returns its path. An error is one line naming the path and
// the system's reason (no such directory, no permission, disk full).
absl::StatusOr<std::string> WriteSnapshot(std::string_view directory,
                                          const Trace& trace, int64_t stamp_ns,
                                          std::string_view node = "");

// The snapshot files in `directory`, oldest first; an error names the
// directory if it cannot be read.
absl::StatusOr<std::vector<std::string>> ListSnapshots(
    std::string_view directory);

// Removes all but the newest `keep` snapshots of `directory`; returns how
// many it removed.
absl::StatusOr<int> PruneSnapshots(std::string_view directory, int keep);

// Removes the oldest snapshots of `directory` until they take at most
// `max_bytes`, never the newest; returns how many it removed.
absl::StatusOr<int> PruneSnapshotsToBytes(std::string_view directory,
                                          uint64_t max_bytes);

}  // namespace aos::tracing

#endif  // AOS_TRACING_SNAPSHOT_FILES_H_
