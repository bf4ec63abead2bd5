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

TEST(PrintableTest, InlineKeepsOrdinaryTextAsItIs) {
  EXPECT_EQ(InlinePrintable("/dev/shm/aos/config.json"),
            "/dev/shm/aos/config.json");
  EXPECT_EQ(InlinePrintable("a \"quoted\" name"), "a \"quoted\" name");
  const std::string bound(kPrintableMaxBytes, 'y');
  EXPECT_EQ(InlinePrintable(bound), bound);
}

TEST(PrintableTest, InlineQuotesAndEscapesWhatIsNotPrintable) {
  EXPECT_EQ(InlinePrintable(std::string("a\0b", 3)), "\"a\\x00b\"");
  EXPECT_EQ(InlinePrintable("\x1b[2J"), "\"\\x1b[2J\"");
  EXPECT_EQ(InlinePrintable("caf\xc3\xa9"), "\"caf\\xc3\\xa9\"");
}

TEST(PrintableTest, InlineElidesLongTextAndSaysItsLength) {
  const std::string path = "/" + std::string(1'000'000, 'd') + "/x.json";
  EXPECT_EQ(InlinePrintable(path, 8), "\"/ddd...json\" (1000008 bytes)");
  EXPECT_LE(InlinePrintable(path).size(), 4 * kPrintableMaxBytes + 30);
}

}  // namespace
}  // namespace aos
