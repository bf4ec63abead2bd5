#include "aos/util/uuid.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(UuidTest, ParsesAndPrintsTheCanonicalForm) {
  const auto uuid = UUID::Parse("9F1C5a3e-0b2d-4c6e-8a7f-0123456789ab");
  ASSERT_TRUE(uuid.ok());
  EXPECT_EQ(uuid->ToString(), "9f1c5a3e-0b2d-4c6e-8a7f-0123456789ab");
  EXPECT_EQ(UUID::FromBytes(uuid->bytes().data()), *uuid);
  EXPECT_FALSE(UUID::Parse("9f1c5a3e0b2d4c6e8a7f0123456789ab").ok());
  EXPECT_FALSE(UUID::Parse("9f1c5a3e-0b2d-4c6e-8a7f-0123456789ag").ok());
  EXPECT_TRUE(UUID().IsZero());
}

TEST(UuidTest, RandomOnesDifferAndAreVersion4) {
  const UUID a = UUID::Random();
  const UUID b = UUID::Random();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.ToString()[14], '4');
  EXPECT_FALSE(a.IsZero());
}

TEST(UuidTest, TheBootUuidIsStable) {
  EXPECT_EQ(UUID::BootUuid(), UUID::BootUuid());
  EXPECT_FALSE(UUID::BootUuid().IsZero());
}

}  // namespace
}  // namespace aos
