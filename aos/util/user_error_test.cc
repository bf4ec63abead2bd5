#include "aos/util/user_error.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(UserErrorTest, OneLineNamingTheProgramAndExitOne) {
  EXPECT_EXIT(ExitForUserError("--count=-1 is negative"),
              ::testing::ExitedWithCode(1),
              "^user_error_test: --count=-1 is negative\n$");
  EXPECT_EXIT(ExitForUserError("no channel /tset; closest channels:\n"
                               "  /test (A)\n  /test (B)\n"),
              ::testing::ExitedWithCode(1),
              "^user_error_test: no channel /tset; closest channels: /test "
              "\\(A\\); /test \\(B\\)\n$");
}

}  // namespace
}  // namespace aos
