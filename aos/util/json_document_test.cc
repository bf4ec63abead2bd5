#include "aos/util/json_document.h"

#include <cmath>

#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kJson = R"({
  "thread": { "0": { "receiver": { "min": 6, "avg": 29.46, "name": "r" } } },
  "list": [ 1, "two", null ],
  "big": 9007199254740993,
  "whole": 1e3,
  "none": null,
  "yes": true
})";

JsonDocument Doc() {
  auto doc = JsonDocument::Parse(kJson, "sample.json");
  CHECK(doc.ok()) << doc.status().message();
  return std::move(doc).value();
}

TEST(JsonDocumentTest, LooksUpMembersAndElements) {
  const JsonValue receiver = Doc().root()["thread"]["0"]["receiver"];
  EXPECT_EQ(*receiver["min"].Integer(), 6);
  EXPECT_DOUBLE_EQ(*receiver["avg"].Number(), 29.46);
  EXPECT_EQ(*receiver["name"].String(), "r");
  EXPECT_EQ(receiver["avg"].path(), "thread.0.receiver.avg");
  EXPECT_EQ(receiver["avg"].source(), "sample.json");
  const JsonValue list = Doc().root()["list"];
  EXPECT_EQ(*list.At(0).Integer(), 1);
  EXPECT_EQ(*list.At(1).String(), "two");
  EXPECT_TRUE(list.At(2).IsNull());
  EXPECT_EQ(list.At(1).path(), "list[1]");
  EXPECT_EQ(*Doc().root()["big"].Integer(), 9007199254740993)
      << "integers are exact beyond 2^53";
  EXPECT_EQ(*Doc().root()["whole"].Integer(), 1000);
}

TEST(JsonDocumentTest, BooleansAreOnlyTrueAndFalse) {
  EXPECT_TRUE(*Doc().root()["yes"].Boolean());
  EXPECT_EQ(Doc().root()["whole"].Boolean().status().message(),
            "sample.json: whole is a number, not true or false");
}

TEST(JsonDocumentTest, NullIsNanOnlyWhenAskedFor) {
  EXPECT_TRUE(std::isnan(*Doc().root()["none"].NumberOrNan()));
  const auto number = Doc().root()["none"].Number();
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().message(),
            "sample.json: none is null, not a number");
}

TEST(JsonDocumentTest, AMissingValueNamesTheFileAndTheFirstMissingKey) {
  const JsonValue missing = Doc().root()["thread"]["1"]["receiver"]["min"];
  EXPECT_FALSE(missing.exists());
  const auto min = missing.Number();
  ASSERT_FALSE(min.ok());
  EXPECT_EQ(min.status().message(), "sample.json: thread.1 is missing");
  EXPECT_EQ(Doc().root()["list"].At(7).status().message(),
            "sample.json: list[7] is missing (list has 3 elements)");
}

TEST(JsonDocumentTest, AValueOfTheWrongTypeSaysWhatItIs) {
  EXPECT_EQ(Doc().root()["list"]["x"].status().message(),
            "sample.json: list is an array, not an object");
  EXPECT_EQ(Doc().root()["thread"].At(0).status().message(),
            "sample.json: thread is an object, not an array");
  EXPECT_EQ(Doc().root()["list"].At(1).Number().status().message(),
            "sample.json: list[1] is a string, not a number");
  EXPECT_EQ(Doc()
                .root()["thread"]["0"]["receiver"]["avg"]
                .Integer()
                .status()
                .message(),
            "sample.json: thread.0.receiver.avg is a number, not an integer "
            "that fits 64 bits");
  EXPECT_EQ(Doc().root()["big"].String().status().message(),
            "sample.json: big is a number, not a string");
  EXPECT_EQ(Doc().root().Elements().status().message(),
            "sample.json: the top level is an object, not an array");
}

TEST(JsonDocumentTest, MembersComeInKeyOrderWithTheirPaths) {
  auto members = Doc().root()["thread"]["0"]["receiver"].Members();
  ASSERT_TRUE(members.ok()) << members.status().message();
  std::vector<std::string> keys;
  for (const auto& [key, value] : *members) {
    keys.push_back(key);
    EXPECT_EQ(value.path(), "thread.0.receiver." + key);
  }
  EXPECT_THAT(keys, ElementsAre("avg", "min", "name"));
  auto elements = Doc().root()["list"].Elements();
  ASSERT_TRUE(elements.ok());
  EXPECT_EQ(elements->size(), 3u);
}

TEST(JsonDocumentTest, ValuesOutliveTheirDocument) {
  JsonValue avg = Doc().root()["thread"]["0"]["receiver"]["avg"];
  EXPECT_DOUBLE_EQ(*avg.Number(), 29.46);
}

TEST(JsonDocumentTest, TextThatIsNotJsonIsAnErrorNamingTheSource) {
  const auto doc = JsonDocument::Parse("{ \"a\": [1, 2 }", "broken.json");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("broken.json: not JSON: "));
}

TEST(JsonDocumentTest, AFileThatCannotBeReadIsNamed) {
  const auto doc = JsonDocument::ReadFile("/nonexistent/x.json");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(),
              HasSubstr("/nonexistent/x.json: cannot read: "));
}

}  // namespace
}  // namespace aos
