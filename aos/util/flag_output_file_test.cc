#include "aos/util/flag_output_file.h"

#include <fstream>
#include <sstream>

#include "aos/testing/path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;

TEST(FlagOutputFileTest, WritesTheTextAndANewline) {
  const std::string path = testing::TestTempDir() + "/out.json";
  FlagOutputFile file("prog", "json", path);
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(file.enabled());
  EXPECT_TRUE(file.WriteAndClose("{}"));
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "{}\n");
}

TEST(FlagOutputFileTest, AnEmptyPathIsNoFile) {
  FlagOutputFile file("prog", "json", "");
  EXPECT_TRUE(file.ok());
  EXPECT_FALSE(file.enabled());
}

TEST(FlagOutputFileTest, APathItCannotOpenIsOneLineNamingTheFlag) {
  ::testing::internal::CaptureStderr();
  FlagOutputFile file("prog", "json", "/nonexistent/out.json");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(file.ok());
  EXPECT_EQ(err,
            "prog: --json=/nonexistent/out.json: cannot open for writing: No "
            "such file or directory\n");
}

TEST(FlagOutputFileDeathTest, WritingAFileNotOpenedIsAProgrammingError) {
  EXPECT_DEATH(
      {
        FlagOutputFile file("prog", "json", "");
        (void)file.WriteAndClose("{}");
      },
      "call it once, on a file given and opened");
}

}  // namespace
}  // namespace aos
