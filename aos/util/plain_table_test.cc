#include "aos/util/plain_table.h"

#include <sstream>

#include "gtest/gtest.h"

namespace aos {
namespace {

std::string Printed(const PlainTable& table) {
  std::ostringstream out;
  table.Print(&out);
  return out.str();
}

TEST(PlainTableTest, FirstColumnLeftOthersRightTrailingSpacesTrimmed) {
  PlainTable table;
  table.AddRow({"callback", "count", "max"});
  table.AddRow({"timer ping", "100", "5"});
  table.AddRow({"short"});
  EXPECT_EQ(Printed(table),
            "  callback    count  max\n"
            "  timer ping    100    5\n"
            "  short\n");
}

// "±" and "→" take one column each, though UTF-8 spends 2 and 3 bytes.
TEST(PlainTableTest, WidthsAreColumnsAndTheLastColumnMayBeLeftAligned) {
  PlainTable table(PlainTable::LastColumn::kLeft);
  table.AddRow({"", "max", "±", "route"});
  table.AddRow({"", "102", "±5.0", "a → b"});
  table.AddRow({"", "7", "-", "a → b → c"});
  EXPECT_EQ(Printed(table),
            "    max     ±  route\n"
            "    102  ±5.0  a → b\n"
            "      7     -  a → b → c\n");
}

}  // namespace
}  // namespace aos
