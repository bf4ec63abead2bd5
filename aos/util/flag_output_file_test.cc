#include "aos/util/flag_output_file.h"

#include <fstream>
#include <sstream>

#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(FlagOutputFileTest, WritesTheTextAndANewline) {
  const std::string path = testing::TestTempDir() + "/out.json";
  FlagOutputFile file("--json", path);
  EXPECT_TRUE(file.enabled());
  file.WriteAndClose("{}");
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "{}\n");
}

TEST(FlagOutputFileTest, AnEmptyPathIsNoFile) {
  FlagOutputFile file("--json", "");
  EXPECT_FALSE(file.enabled());
}

TEST(FlagOutputFileDeathTest, APathItCannotOpenIsOneLineNamingTheFlag) {
  EXPECT_EXIT(FlagOutputFile("--json", "/nonexistent/out.json"),
              ::testing::ExitedWithCode(1),
              ": --json=/nonexistent/out.json: cannot open for writing: No "
              "such file or directory\n$");
}

TEST(FlagOutputFileDeathTest, WritingAFileNotOpenedIsAProgrammingError) {
  EXPECT_DEATH(
      {
        FlagOutputFile file("--json", "");
        file.WriteAndClose("{}");
      },
      "call it once, on a file given and opened");
}

}  // namespace
}  // namespace aos
