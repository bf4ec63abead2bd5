#include "aos/testing/path.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace aos::testing {

std::string ArtifactPath(std::string_view workspace_relative_path) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  if (srcdir != nullptr && workspace != nullptr) {
    return std::string(srcdir) + "/" + workspace + "/" +
           std::string(workspace_relative_path);
  }
  return std::string(workspace_relative_path);
}

std::string TestTempDir() {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/aos_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    perror(("aos::testing::TestTempDir: mkdtemp " + pattern).c_str());
    abort();
  }
  return pattern;
}

}  // namespace aos::testing
