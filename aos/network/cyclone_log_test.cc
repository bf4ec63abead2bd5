#include "aos/network/cyclone_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "dds/ddsrt/log.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::chrono::steady_clock::time_point At(int ms) {
  return std::chrono::steady_clock::time_point(milliseconds(ms));
}

// At most `burst` lines within any period: a flood of one line a
// millisecond for 25 s passes 3 lines each 10 s, and the first line after
// the refused ones says how many there were.
TEST(LineRateLimitTest, AFloodPassesABurstPerPeriodAndCountsTheRest) {
  LineRateLimit limit(3, seconds(10));
  std::vector<int> admitted_at;
  std::vector<uint64_t> held_back_said;
  for (int ms = 0; ms < 25000; ++ms) {
    uint64_t held_back = 12345;
    if (limit.Admit(At(ms), &held_back)) {
      admitted_at.push_back(ms);
      held_back_said.push_back(held_back);
    } else {
      EXPECT_EQ(held_back, 12345u) << "a refusal leaves it alone";
    }
  }
  EXPECT_EQ(admitted_at, (std::vector<int>{0, 1, 2, 10000, 10001, 10002, 20000,
                                           20001, 20002}));
  // 9997 refused between 2 and 10000 (3 to 9999), then 9997 again.
  EXPECT_EQ(held_back_said,
            (std::vector<uint64_t>{0, 0, 0, 9997, 0, 0, 9997, 0, 0}));
}

// Lines that come slower than the limit all pass.
TEST(LineRateLimitTest, SlowLinesAllPass) {
  LineRateLimit limit(2, seconds(10));
  for (int i = 0; i < 100; ++i) {
    uint64_t held_back = 1;
    ASSERT_TRUE(limit.Admit(At(i * 5000), &held_back)) << i;
    EXPECT_EQ(held_back, 0u);
  }
}

// What a peer put into a Cyclone line (a certificate subject) cannot move
// the cursor, forge a line, or fill the terminal.
TEST(CycloneLogTest, LinesAreEscapedBoundedAndSayWhatWasHeldBack) {
  EXPECT_EQ(
      CycloneLogLine("message_bridge",
                     "fsm: handshake failed; subject: /CN=\x1b[2Jpi1\n", 0),
      "message_bridge: Cyclone DDS: \"fsm: handshake failed; subject: "
      "/CN=\\x1b[2Jpi1\"\n");
  EXPECT_EQ(CycloneLogLine("b", "x\nforged line", 7),
            "b: Cyclone DDS: \"x\\nforged line\" (7 more Cyclone DDS lines "
            "not shown)\n");
  const std::string line = CycloneLogLine("b", std::string(1 << 20, 'a'), 0);
  EXPECT_LT(line.size(), 4 * kCycloneLogMaxMessageBytes + 64);
  EXPECT_NE(line.find("(1048576 bytes)"), std::string::npos) << line;
}

// Cyclone's own log calls, through the installed sink: in a thread with a
// capture, kept there; otherwise on stderr, escaped, at most the burst.
TEST(CycloneLogTest, CycloneLinesAreCapturedOrPrintedEscapedAndLimited) {
  InstallCycloneLog();
  {
    CycloneLogCapture capture;
    // Cyclone's DDS_WARNING, without its C-only conditional expression.
    dds_log(DDS_LC_WARNING, __FILE__, __LINE__, __func__,
            "refused: \x1b]0;title\x07 %d\n", 42);
    ASSERT_EQ(capture.lines().size(), 1u);
    EXPECT_EQ(capture.lines()[0], "\"refused: \\x1b]0;title\\x07 42\"");
    EXPECT_EQ(capture.Summary(),
              "Cyclone DDS said \"refused: \\x1b]0;title\\x07 42\"");
  }

  // stderr into a file while Cyclone logs 3 bursts' worth.
  const std::string path = aos::testing::TestTempDir() + "/stderr.txt";
  ScopedFd file(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
  ASSERT_TRUE(file.valid());
  ScopedFd saved(dup(STDERR_FILENO));
  ASSERT_EQ(dup2(file.get(), STDERR_FILENO), STDERR_FILENO);
  {
    // Captured, then not an error after all: printed as if not captured.
    CycloneLogCapture capture;
    dds_log(DDS_LC_WARNING, __FILE__, __LINE__, __func__, "just a warning\n");
    capture.Release();
    EXPECT_TRUE(capture.lines().empty());
  }
  for (size_t i = 0; i < 3 * kCycloneLogBurst; ++i) {
    dds_log(DDS_LC_ERROR, __FILE__, __LINE__, __func__,
            "peer said \"%s\" %zu\n", "\r\n\x1b[1A", i);
  }
  ASSERT_EQ(dup2(saved.get(), STDERR_FILENO), STDERR_FILENO);
  saved.reset();
  file.reset();

  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // The first capture printed nothing, the released one its line, and the
  // burst is the limit: the test takes far less than kCycloneLogPeriod.
  const std::string program = program_invocation_short_name;
  ASSERT_EQ(lines.size(), kCycloneLogBurst);
  EXPECT_EQ(lines[0], program + ": Cyclone DDS: \"just a warning\"");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i],
              program + ": Cyclone DDS: \"peer said \\\"\\r\\n\\x1b[1A\\\" " +
                  std::to_string(i - 1) + "\"");
  }
}

TEST(CycloneLogTest, ASummaryShowsTheFirstLinesAndCountsTheRest) {
  CycloneLogCapture capture;
  EXPECT_EQ(capture.Summary(), "Cyclone DDS said nothing");
  for (int i = 0; i < 30; ++i) capture.Add("line " + std::to_string(i));
  EXPECT_EQ(capture.lines().size(), CycloneLogCapture::kMaxLines);
  EXPECT_EQ(capture.lines()[15], "\"line 15\"");
  EXPECT_EQ(capture.Summary(),
            "Cyclone DDS said \"line 0\"; \"line 1\"; \"line 2\"; \"line 3\"; "
            "and 26 more lines");
}

}  // namespace
}  // namespace aos::message_bridge
