#ifndef AOS_NETWORK_TEST_CERTIFICATES_H_
#define AOS_NETWORK_TEST_CERTIFICATES_H_

// For tests: a fresh test CA with node certificates, made by
// tools/dds_security/make_test_ca.sh (the test needs it in its data).
//
//   const std::string ca = MakeTestCa({"pi1", "pi2"});
//   // ca + "/identity_ca.pem", ca + "/pi1/identity.pem", ...

#include <cstdlib>
#include <string>
#include <vector>

#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {

// A new directory holding a new CA and `nodes`' files. Fails the test (and
// returns "") if the script fails, with what it said.
inline std::string MakeTestCa(const std::vector<std::string>& nodes) {
  const std::string base = aos::testing::TestTempDir();
  const std::string dir = base + "/ca";
  const std::string log = base + "/make_test_ca.log";
  std::string command = StrCat(
      "bash ", aos::testing::ArtifactPath("tools/dds_security/make_test_ca.sh"),
      " ", dir);
  for (const std::string& node : nodes) command += " " + node;
  command += " >" + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << command << " failed; see " << log;
    return "";
  }
  return dir;
}

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_TEST_CERTIFICATES_H_
