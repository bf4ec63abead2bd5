#ifndef AOS_TESTING_PATH_H_
#define AOS_TESTING_PATH_H_

#include <string>
#include <string_view>

namespace aos::testing {

// Returns the path of a data file of a test, given its path from the
// workspace root (e.g. "aos/testdata/a.json"). Works under `bazel test` and
// `bazel run` (runfiles) and falls back to the path itself elsewhere.
std::string ArtifactPath(std::string_view workspace_relative_path);

// Returns a fresh directory for the test to write into, inside
// $TEST_TMPDIR when Bazel provides one. Aborts with a message if it cannot be
// created.
std::string TestTempDir();

}  // namespace aos::testing

#endif  // AOS_TESTING_PATH_H_
