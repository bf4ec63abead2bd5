#include "aos/util/cpu_set.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(CpuSetTest, ParsesListsAndRanges) {
  auto cpus = ParseCpuList("0,2-3");
  ASSERT_TRUE(cpus.ok());
  EXPECT_TRUE(CPU_ISSET(0, &*cpus));
  EXPECT_FALSE(CPU_ISSET(1, &*cpus));
  EXPECT_TRUE(CPU_ISSET(2, &*cpus));
  EXPECT_TRUE(CPU_ISSET(3, &*cpus));
  EXPECT_EQ(CPU_COUNT(&*cpus), 3);
}

TEST(CpuSetTest, BadPartsAreNamed) {
  EXPECT_EQ(ParseCpuList("0,x").status().message(), "'x' is not a CPU number");
  EXPECT_EQ(ParseCpuList("3-1").status().message(),
            "'3-1' is not a CPU range like 0-3");
  EXPECT_EQ(ParseCpuList("").status().message(), "empty CPU list");
}

TEST(CpuSetTest, FormatsTheShortestListThatReadsBack) {
  for (std::string_view list : {"0", "1", "0,2-3", "0-1", "0,5,7-9,1023"}) {
    auto cpus = ParseCpuList(list);
    ASSERT_TRUE(cpus.ok()) << list;
    EXPECT_EQ(FormatCpuList(*cpus), list);
  }
  cpu_set_t none;
  CPU_ZERO(&none);
  EXPECT_EQ(FormatCpuList(none), "");
}

}  // namespace
}  // namespace aos
