#include "aos/tracing/snapshot_files.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "aos/tracing/ring_file.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

constexpr std::string_view kPrefix = "aos_trace.";
constexpr std::string_view kSuffix = ".json";

absl::Status PathError(std::string_view path, std::string_view what) {
  return absl::UnavailableError(
      StrCat(path, ": ", what, ": ", strerror(errno)));
}

}  // namespace

NodeRings ReadNodeRings(std::string_view shm_base) {
  NodeRings node;
  for (const std::string& path : ListRingFiles(shm_base, &node.pruned)) {
    absl::StatusOr<MappedRing> mapped = MapRing(path);
    if (!mapped.ok()) {
      node.skipped.push_back(std::string(mapped.status().message()));
      continue;
    }
    absl::StatusOr<RingCopy> copy = CopyRing(mapped->bytes());
    if (!copy.ok()) {
      node.skipped.push_back(StrCat(path, ": ", copy.status().message()));
      continue;
    }
    node.rings.push_back(std::move(*copy));
  }
  return node;
}

absl::StatusOr<std::string> WriteSnapshot(std::string_view directory,
                                          const Trace& trace, int64_t stamp_ns,
                                          std::string_view node) {
  char stamp[32];
  snprintf(stamp, sizeof(stamp), "%020lld", static_cast<long long>(stamp_ns));
  const std::string path =
      StrCat(directory, "/", kPrefix, stamp,
             node.empty() ? std::string() : StrCat(".", node), kSuffix);
  const std::string temporary = StrCat(path, ".tmp");
  FILE* file = fopen(temporary.c_str(), "w");
  if (file == nullptr) return PathError(temporary, "cannot create it");
  const std::string text = TraceJson(trace);
  const bool written =
      fwrite(text.data(), 1, text.size(), file) == text.size() &&
      fflush(file) == 0;
  const int write_errno = errno;
  if (fclose(file) != 0 || !written) {
    errno = written ? errno : write_errno;
    const absl::Status status = PathError(temporary, "cannot write it");
    unlink(temporary.c_str());
    return status;
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const absl::Status status = PathError(path, "cannot rename it into place");
    unlink(temporary.c_str());
    return status;
  }
  return path;
}

absl::StatusOr<std::vector<std::string>> ListSnapshots(
    std::string_view directory) {
  std::error_code error;
  std::filesystem::directory_iterator it{std::filesystem::path(directory),
                                         error};
  if (error) {
    return absl::UnavailableError(
        StrCat(directory, ": cannot list it: ", error.message()));
  }
  std::vector<std::string> paths;
  for (const std::filesystem::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kPrefix) && name.ends_with(kSuffix)) {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

absl::StatusOr<int> PruneSnapshots(std::string_view directory, int keep) {
  absl::StatusOr<std::vector<std::string>> paths = ListSnapshots(directory);
  if (!paths.ok()) return paths.status();
  int removed = 0;
  const int excess = static_cast<int>(paths->size()) - keep;
  for (int i = 0; i < excess; ++i) {
    if (unlink((*paths)[i].c_str()) != 0) {
      return PathError((*paths)[i], "cannot remove it");
    }
    ++removed;
  }
  return removed;
}

absl::StatusOr<int> PruneSnapshotsToBytes(std::string_view directory,
                                          uint64_t max_bytes) {
  absl::StatusOr<std::vector<std::string>> paths = ListSnapshots(directory);
  if (!paths.ok()) return paths.status();
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (const std::string& path : *paths) {
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    sizes.push_back(error ? 0 : size);
    total += sizes.back();
  }
  int removed = 0;
  // Oldest first, never the newest.
  for (size_t i = 0; i + 1 < paths->size() && total > max_bytes; ++i) {
    if (unlink((*paths)[i].c_str()) != 0) {
      return PathError((*paths)[i], "cannot remove it");
    }
    total -= sizes[i];
    ++removed;
  }
  return removed;
}

}  // namespace aos::tracing
