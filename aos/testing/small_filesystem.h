#ifndef AOS_TESTING_SMALL_FILESYSTEM_H_
#define AOS_TESTING_SMALL_FILESYSTEM_H_

// A filesystem of a few hundred kilobytes, private to one test, for testing
// what a full disk does.
//
//   const std::string dir = TestTempDir() + "/small";
//   absl::Status mounted = MountSmallTmpfs(dir, 256 * 1024);
//   if (!mounted.ok()) GTEST_SKIP() << mounted.message();
//   FillFilesystem(dir, 0);   // full
//   ...
//   RemoveFiller(dir);        // freed again
//
// The calling thread first moves into a mount namespace of its own
// (unshare(2)), made private, so nobody outside the test sees the mount
// and it goes away with the test. That needs CAP_SYS_ADMIN (root): without
// it, MountSmallTmpfs says so and tests skip with that reason. Forked
// children of the thread (death tests) inherit the namespace; other threads
// of the process do not see the mount.

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace aos::testing {

// Mounts a tmpfs of `bytes` bytes on `directory` (created if missing), in a
// mount namespace of this thread's own.
absl::Status MountSmallTmpfs(const std::string& directory, size_t bytes);

// Writes `directory`/filler until the filesystem is full, then gives back
// `leave_bytes` (rounded up to whole pages).
void FillFilesystem(const std::string& directory, size_t leave_bytes);

// Removes what FillFilesystem wrote.
void RemoveFiller(const std::string& directory);

// Bytes the filesystem of `directory` has free for this user.
size_t FreeBytes(const std::string& directory);

}  // namespace aos::testing

#endif  // AOS_TESTING_SMALL_FILESYSTEM_H_
