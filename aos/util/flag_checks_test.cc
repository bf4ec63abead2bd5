#include "aos/util/flag_checks.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TEST(FlagChecksTest, NotNegativeNamesTheFlagAndValue) {
  EXPECT_TRUE(CheckNotNegative("--count", 0).ok());
  EXPECT_TRUE(CheckNotNegative("--duration", 2.5).ok());
  EXPECT_EQ(Message(CheckNotNegative("--count", -1)),
            "--count=-1 is negative: give 0 or more");
  EXPECT_EQ(Message(CheckNotNegative("--duration", -0.5)),
            "--duration=-0.5 is negative: give 0 or more");
  EXPECT_EQ(CheckNotNegative("--count", -1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Message(CheckNotNegative("--poll_period_ms", -3,
                               ": give 0 (a wakeup per message) or more")),
      "--poll_period_ms=-3: give 0 (a wakeup per message) or more");
}

TEST(FlagChecksTest, NanFailsEveryNumericCheck) {
  const double nan = std::nan("");
  EXPECT_FALSE(CheckNotNegative("--duration", nan).ok());
  EXPECT_FALSE(CheckInRange("--delay_ms", nan, 0.0, 1e6).ok());
  EXPECT_FALSE(CheckAtLeast("--rate", nan, 0.0).ok());
  EXPECT_EQ(Message(CheckNotNegative("--duration", nan)),
            "--duration=nan is negative: give 0 or more");
}

TEST(FlagChecksTest, InRangeIncludesBothEnds) {
  EXPECT_TRUE(CheckInRange("--priority", 0, 0, 99).ok());
  EXPECT_TRUE(CheckInRange("--priority", 99, 0, 99).ok());
  EXPECT_EQ(Message(CheckInRange("--priority", 100, 0, 99)),
            "--priority=100 is not 0-99");
  EXPECT_EQ(Message(CheckInRange("--queue", -1, 0, 65535)),
            "--queue=-1 is not 0-65535");
  EXPECT_EQ(Message(CheckInRange("--metrics_port", 70000, 0, 65535,
                                 " is not a TCP port: give 1-65535 (0: off)")),
            "--metrics_port=70000 is not a TCP port: give 1-65535 (0: off)");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(
      CheckInRange("--interval_s", inf, 0.0, std::numeric_limits<double>::max())
          .ok());
}

TEST(FlagChecksTest, AtLeast) {
  EXPECT_TRUE(CheckAtLeast("--queue_maxlen", 1, 1).ok());
  EXPECT_EQ(Message(CheckAtLeast("--queue_maxlen", 0, 1)),
            "--queue_maxlen=0 is not 1 or more");
}

TEST(FlagChecksTest, OneOfListsTheChoices) {
  EXPECT_TRUE(CheckOneOf("--units", "us", {"ns", "us", "ms"}).ok());
  EXPECT_EQ(Message(CheckOneOf("--units", "s", {"ns", "us", "ms"})),
            "--units=s is not one of ns, us, ms");
  // A hostile value stays on one printable line.
  const std::string message =
      Message(CheckOneOf("--format", "a\nb", {"table", "csv"}));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(message.starts_with("--format=")) << message;
  EXPECT_TRUE(message.ends_with(" is not one of table, csv")) << message;
}

TEST(FlagChecksTest, WritableFile) {
  EXPECT_TRUE(CheckWritableFile("--plot", "").ok());
  const std::string path = testing::TestTempDir() + "/flag_checks_out.dat";
  std::filesystem::remove(path);
  EXPECT_TRUE(CheckWritableFile("--plot", path).ok());
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(
      Message(CheckWritableFile("--histogram_file", "/nonexistent/h.dat")),
      "cannot write --histogram_file=/nonexistent/h.dat: No such file or "
      "directory");
}

TEST(FlagChecksTest, ExitOnFlagErrorIsOneLineAndExitOne) {
  ExitOnFlagError(absl::OkStatus());
  EXPECT_EXIT(ExitOnFlagError(CheckNotNegative("--count", -2)),
              ::testing::ExitedWithCode(1),
              "^flag_checks_test: --count=-2 is negative: give 0 or more\n$");
}

}  // namespace
}  // namespace aos
