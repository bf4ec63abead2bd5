#include "aos/util/printable.h"

#include <string>

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(PrintableTest, PlainTextIsQuotedUnchanged) {
  EXPECT_EQ(Printable("zstd"), "\"zstd\"");
  EXPECT_EQ(Printable(""), "\"\"");
}

TEST(PrintableTest, ControlBytesQuotesAndBackslashesAreEscaped) {
  const std::string text("a\0b\x1b[2J\n\"\\\xff", 11);
  EXPECT_EQ(Printable(text), "\"a\\x00b\\x1b[2J\\n\\\"\\\\\\xff\"");
}

TEST(PrintableTest, LongTextKeepsBothEndsAndSaysItsLength) {
  const std::string text = "head" + std::string(1 << 20, 'x') + "tail";
  const std::string printed = Printable(text, 8);
  EXPECT_EQ(printed, "\"head...tail\" (1048584 bytes)");
}

TEST(PrintableTest, TextOfExactlyTheBoundIsKeptWhole) {
  const std::string text(kPrintableMaxBytes, 'y');
  EXPECT_EQ(Printable(text), "\"" + text + "\"");
}

TEST(PrintableTest, OutputIsBoundedWhateverTheInput) {
  const std::string text(1 << 16, '\x01');
  EXPECT_LE(Printable(text).size(), 4 * kPrintableMaxBytes + 30);
}

}  // namespace
}  // namespace aos
