#include "aos/json_to_flatbuffer.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "aos/testdata/everything.h"
#include "aos/testdata/everything_bfbs_generated.h"
#include "aos/testdata/everything_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using aos::testing::Everything;
using ::testing::HasSubstr;

const reflection::Schema& Schema() { return aos::testing::EverythingSchema(); }

flatbuffers::DetachedBuffer Parse(std::string_view json) {
  return aos::testing::ParseEverything(json);
}

const Everything& Root(const flatbuffers::DetachedBuffer& buffer) {
  return *flatbuffers::GetRoot<Everything>(buffer.data());
}

std::string ToJson(const flatbuffers::DetachedBuffer& buffer,
                   FlatbufferToJsonOptions options = {}) {
  return FlatbufferToJson(buffer.data(), Schema(), options);
}

// JSON -> flatbuffer -> JSON -> flatbuffer; both flatbuffers' JSON agree and
// the second buffer is returned.
flatbuffers::DetachedBuffer RoundTrip(std::string_view json) {
  flatbuffers::DetachedBuffer first = Parse(json);
  const std::string printed = ToJson(first);
  flatbuffers::DetachedBuffer second = Parse(printed);
  EXPECT_EQ(ToJson(second), printed);
  return second;
}

TEST(JsonToFlatbufferTest, IntegersRoundTripAtTheirLimits) {
  const flatbuffers::DetachedBuffer buffer = RoundTrip(R"({
    "b": true, "i8": -128, "u8": 255, "i16": -32768, "u16": 65535,
    "i32": -2147483648, "u32": 4294967295,
    "i64": -9223372036854775808, "u64": 18446744073709551615 })");
  const Everything& e = Root(buffer);
  EXPECT_TRUE(e.b());
  EXPECT_EQ(e.i8(), std::numeric_limits<int8_t>::min());
  EXPECT_EQ(e.u8(), std::numeric_limits<uint8_t>::max());
  EXPECT_EQ(e.i16(), std::numeric_limits<int16_t>::min());
  EXPECT_EQ(e.u16(), std::numeric_limits<uint16_t>::max());
  EXPECT_EQ(e.i32(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(e.u32(), std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(e.i64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(e.u64(), std::numeric_limits<uint64_t>::max());
}

TEST(JsonToFlatbufferTest, FloatsRoundTripBitExactly) {
  const flatbuffers::DetachedBuffer buffer = RoundTrip(R"({
    "f32": 0.1, "f64": 0.1, "doubles": [ 1e-310, 1.7976931348623157e308,
    -0.0, 2.2250738585072014e-308, 0.30000000000000004 ] })");
  const Everything& e = Root(buffer);
  EXPECT_EQ(e.f32(), 0.1f);
  EXPECT_EQ(e.f64(), 0.1);
  ASSERT_EQ(e.doubles()->size(), 5u);
  EXPECT_EQ(e.doubles()->Get(0), 1e-310);
  EXPECT_EQ(e.doubles()->Get(1), std::numeric_limits<double>::max());
  EXPECT_TRUE(std::signbit(e.doubles()->Get(2)));
  EXPECT_EQ(e.doubles()->Get(3), std::numeric_limits<double>::min());
  EXPECT_EQ(e.doubles()->Get(4), 0.1 + 0.2);
}

TEST(JsonToFlatbufferTest, RandomDoublesAndFloatsRoundTripBitExactly) {
  std::mt19937_64 random(971);
  for (int i = 0; i < 2000; ++i) {
    double d;
    float f;
    do {
      d = std::bit_cast<double>(random());
    } while (!std::isfinite(d));
    do {
      f = std::bit_cast<float>(static_cast<uint32_t>(random()));
    } while (!std::isfinite(f));
    flatbuffers::FlatBufferBuilder fbb;
    aos::testing::EverythingBuilder builder(fbb);
    builder.add_f64(d);
    builder.add_f32(f);
    fbb.Finish(builder.Finish());
    const std::string json = FlatbufferToJson(fbb.GetBufferPointer(), Schema());
    const flatbuffers::DetachedBuffer parsed = Parse(json);
    ASSERT_EQ(std::bit_cast<uint64_t>(Root(parsed).f64()),
              std::bit_cast<uint64_t>(d))
        << json;
    ASSERT_EQ(std::bit_cast<uint32_t>(Root(parsed).f32()),
              std::bit_cast<uint32_t>(f))
        << json;
  }
}

// In flatbuffers' dialect (strict_json = false) NaN and infinities print
// as nan, inf, -inf and round-trip exactly.
TEST(JsonToFlatbufferTest, NanAndInfinitiesRoundTripInTheDialect) {
  const FlatbufferToJsonOptions dialect = {.strict_json = false};
  const flatbuffers::DetachedBuffer first =
      Parse(R"({ "f32": nan, "f64": -inf, "doubles": [ inf, -inf, nan ] })");
  const std::string printed = ToJson(first, dialect);
  const flatbuffers::DetachedBuffer buffer = Parse(printed);
  EXPECT_EQ(ToJson(buffer, dialect), printed);
  const Everything& e = Root(buffer);
  EXPECT_TRUE(std::isnan(e.f32()));
  EXPECT_EQ(e.f64(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.doubles()->Get(0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.doubles()->Get(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(e.doubles()->Get(2)));
  EXPECT_THAT(printed, HasSubstr("\"f32\": nan"));
  EXPECT_THAT(printed, HasSubstr("\"f64\": -inf"));
}

// By default the output is RFC 8259 JSON: what JSON cannot hold prints as
// null, and null reads back as "not set" (the field's default).
TEST(JsonToFlatbufferTest, StrictJsonPrintsNonFiniteNumbersAsNull) {
  const flatbuffers::DetachedBuffer buffer = Parse(
      R"({ "f32": nan, "f64": -inf, "i32": 5, "doubles": [ inf, 1.5 ] })");
  const std::string printed = ToJson(buffer);
  EXPECT_EQ(printed,
            "{ \"i32\": 5, \"f32\": null, \"f64\": null, \"doubles\": [ null, "
            "1.5 ] }");
  EXPECT_EQ(printed.find("nan"), std::string::npos);
  EXPECT_EQ(printed.find("inf"), std::string::npos);
}

// non_finite_as_strings: still strict JSON, and it reads back exactly (a
// configuration's NaN defaults must survive aos_config_check's print).
TEST(JsonToFlatbufferTest, NonFiniteAsStringsIsStrictAndRoundTrips) {
  const FlatbufferToJsonOptions strings = {.non_finite_as_strings = true};
  const flatbuffers::DetachedBuffer first =
      Parse(R"({ "f32": nan, "f64": -inf, "doubles": [ inf, 1.5, nan ] })");
  const std::string printed = ToJson(first, strings);
  EXPECT_EQ(printed,
            "{ \"f32\": \"nan\", \"f64\": \"-inf\", \"doubles\": [ "
            "\"inf\", 1.5, \"nan\" ] }");
  const flatbuffers::DetachedBuffer again = Parse(printed);
  EXPECT_EQ(ToJson(again, strings), printed);
  const Everything& e = Root(again);
  EXPECT_TRUE(std::isnan(e.f32()));
  EXPECT_EQ(e.f64(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.doubles()->Get(0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(e.doubles()->Get(2)));
}

// What a log holds reaches a terminal through aos_dump: control characters
// (C0, DEL, C1) are escaped in strings and in names from the schema, which
// a forged log supplies too.
TEST(JsonToFlatbufferTest, ControlCharactersAreEscapedInStringsAndNames) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto text = fbb.CreateString(
      "a\x1b[2Jb\x7f c\xc2\x9b"
      "1m \xc3\xa9");
  aos::testing::EverythingBuilder builder(fbb);
  builder.add_text(text);
  fbb.Finish(builder.Finish());
  const std::string printed =
      FlatbufferToJson(fbb.GetBufferPointer(), Schema());
  EXPECT_EQ(printed,
            "{ \"text\": \"a\\u001b[2Jb\\u007f c\\u009b1m \xc3\xa9\" }");
  // The same through a schema whose field is named with an escape
  // sequence: "text" renamed in place to "t\x1b[x" (same length).
  std::string schema_bytes(reinterpret_cast<const char*>(
                               aos::testing::EverythingBinarySchema::data()),
                           aos::testing::EverythingBinarySchema::size());
  const std::string name("\x04\0\0\0text\0", 9);
  const size_t at = schema_bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  schema_bytes.replace(at + 4, 4, "t\x1b[x");
  const std::string renamed = FlatbufferToJson(
      fbb.GetBufferPointer(), *reflection::GetSchema(schema_bytes.data()));
  EXPECT_NE(renamed.find("\"t\\u001b[x\": "), std::string::npos) << renamed;
  EXPECT_EQ(renamed.find('\x1b'), std::string::npos) << renamed;
}

TEST(JsonToFlatbufferTest, NullMembersAreLeftUnset) {
  const flatbuffers::DetachedBuffer buffer = Parse(R"({ "f32": null,
      "i32": 7, "text": null, "leaf": { "weight": null }, "i64": null })");
  const Everything& e = Root(buffer);
  EXPECT_FALSE(flatbuffers::IsFieldPresent(&e, Everything::VT_F32));
  EXPECT_FALSE(flatbuffers::IsFieldPresent(&e, Everything::VT_I64));
  EXPECT_EQ(e.text(), nullptr);
  EXPECT_EQ(e.i32(), 7);
  ASSERT_NE(e.leaf(), nullptr);
  EXPECT_EQ(e.leaf()->weight(), 0.0);
  // A string that says null stays a string.
  EXPECT_EQ(Root(Parse(R"({ "text": "null", "i8": null })")).text()->str(),
            "null");
  // Errors still point at the right column: blanking keeps positions.
  auto bad = JsonToFlatbuffer(R"({ "f32": null, "i8": 999 })", Schema());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr(":1:"));
}

TEST(JsonToFlatbufferTest, StringsWithEscapesRoundTrip) {
  const flatbuffers::DetachedBuffer buffer = RoundTrip(
      R"({ "text": "quote \" backslash \\ newline \n tab \t bell \u0007 π 971",
           "strings": [ "", "a", "/aos" ] })");
  const Everything& e = Root(buffer);
  EXPECT_EQ(e.text()->str(),
            "quote \" backslash \\ newline \n tab \t bell \a π 971");
  ASSERT_EQ(e.strings()->size(), 3u);
  EXPECT_EQ(e.strings()->Get(0)->str(), "");
  EXPECT_EQ(e.strings()->Get(2)->str(), "/aos");
}

TEST(JsonToFlatbufferTest, VectorsTablesStructsAndUnionsRoundTrip) {
  const flatbuffers::DetachedBuffer buffer = RoundTrip(R"({
    "point": { "x": 1.5, "y": -2.25, "tag": -3 },
    "leaf": { "name": "root", "weight": 3.5 },
    "ints": [ 1, -2, 3 ],
    "leaves": [ { "name": "a" }, { "weight": 2.0 } ],
    "points": [ { "x": 1, "y": 2, "tag": 3 }, { "x": 4, "y": 5, "tag": 6 } ],
    "thing_type": "Other", "thing": { "note": "union member" },
    "bytes": [ 0, 255 ] })");
  const Everything& e = Root(buffer);
  EXPECT_EQ(e.point()->x(), 1.5);
  EXPECT_EQ(e.point()->y(), -2.25f);
  EXPECT_EQ(e.point()->tag(), -3);
  EXPECT_EQ(e.leaf()->name()->str(), "root");
  EXPECT_EQ(e.ints()->Get(1), -2);
  ASSERT_EQ(e.leaves()->size(), 2u);
  EXPECT_EQ(e.leaves()->Get(0)->name()->str(), "a");
  EXPECT_EQ(e.leaves()->Get(1)->weight(), 2.0);
  ASSERT_EQ(e.points()->size(), 2u);
  EXPECT_EQ(e.points()->Get(1)->tag(), 6);
  ASSERT_EQ(e.thing_type(), aos::testing::Thing::Other);
  EXPECT_EQ(e.thing_as_Other()->note()->str(), "union member");
  EXPECT_EQ(e.bytes()->Get(1), 255);
}

TEST(JsonToFlatbufferTest, EnumsPrintByNameAndParseByNameOrNumber) {
  const flatbuffers::DetachedBuffer by_number =
      Parse(R"({ "color": 8, "colors": [ 0, 2 ], "features": 5 })");
  const std::string json = ToJson(by_number);
  EXPECT_THAT(json, HasSubstr("\"color\": \"Blue\""));
  EXPECT_THAT(json, HasSubstr("\"colors\": [ \"Red\", \"Green\" ]"));
  EXPECT_THAT(json, HasSubstr("\"features\": \"Fast Loud\""));
  const flatbuffers::DetachedBuffer by_name = RoundTrip(json);
  EXPECT_EQ(Root(by_name).color(), aos::testing::Color::Blue);
  EXPECT_EQ(Root(by_name).features(),
            aos::testing::Features::Fast | aos::testing::Features::Loud);
  // A value that is no enumerator prints as a number and reads back.
  flatbuffers::FlatBufferBuilder fbb;
  aos::testing::EverythingBuilder builder(fbb);
  builder.add_color(static_cast<aos::testing::Color>(77));
  fbb.Finish(builder.Finish());
  const std::string odd = FlatbufferToJson(fbb.GetBufferPointer(), Schema());
  EXPECT_THAT(odd, HasSubstr("\"color\": 77"));
  EXPECT_EQ(static_cast<int>(Root(Parse(odd)).color()), 77);
}

TEST(JsonToFlatbufferTest, ExplicitDefaultsStayPresent) {
  const flatbuffers::DetachedBuffer buffer = Parse(R"({ "defaulted": 42 })");
  EXPECT_TRUE(
      flatbuffers::IsFieldPresent(&Root(buffer), Everything::VT_DEFAULTED));
  EXPECT_FALSE(flatbuffers::IsFieldPresent(&Root(buffer), Everything::VT_I32));
  EXPECT_EQ(ToJson(buffer), "{ \"defaulted\": 42 }");
}

TEST(JsonToFlatbufferTest, PrintsOnlyPresentFieldsInIdOrder) {
  EXPECT_EQ(ToJson(Parse(R"({ "text": "x", "i8": 1 })")),
            "{ \"i8\": 1, \"text\": \"x\" }");
  EXPECT_EQ(ToJson(Parse("{}")), "{}");
  EXPECT_EQ(ToJson(Parse(R"({ "ints": [] })")), "{ \"ints\": [] }");
}

TEST(JsonToFlatbufferTest, MultiLineIndentsByTwo) {
  EXPECT_EQ(
      ToJson(Parse(R"({ "i8": 1, "ints": [ 2 ] })"), {.multi_line = true}),
      "{\n  \"i8\": 1,\n  \"ints\": [\n    2\n  ]\n}");
}

TEST(JsonToFlatbufferTest, LongVectorsCanBeElided) {
  EXPECT_EQ(ToJson(Parse(R"({ "ints": [ 1, 2, 3 ] })"), {.max_vector_size = 2}),
            "{ \"ints\": [ ... 3 elements ... ] }");
}

TEST(JsonToFlatbufferTest, MalformedJsonNamesSourceLineAndColumn) {
  const absl::StatusOr<flatbuffers::DetachedBuffer> buffer = JsonToFlatbuffer(
      "{\n  \"i8\": 1,\n  \"i16\" 2\n}", Schema(), {.source_name = "bad.json"});
  ASSERT_FALSE(buffer.ok());
  EXPECT_THAT(buffer.status().message(), HasSubstr("bad.json:3:"));
  EXPECT_THAT(buffer.status().message(), HasSubstr("expecting: :"));
}

TEST(JsonToFlatbufferTest, UnknownFieldAndWrongTypeAreNamed) {
  absl::StatusOr<flatbuffers::DetachedBuffer> buffer =
      JsonToFlatbuffer(R"({ "no_such_field": 1 })", Schema());
  ASSERT_FALSE(buffer.ok());
  EXPECT_THAT(buffer.status().message(), HasSubstr("no_such_field"));

  buffer = JsonToFlatbuffer(R"({ "u8": 256 })", Schema());
  ASSERT_FALSE(buffer.ok());
  EXPECT_THAT(buffer.status().message(), HasSubstr("u8"));
}

TEST(JsonToFlatbufferTest, ParsesANamedNonRootTable) {
  const absl::StatusOr<flatbuffers::DetachedBuffer> buffer = JsonToFlatbuffer(
      R"({ "name": "leaf" })", Schema(), {.table_name = "aos.testing.Leaf"});
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  EXPECT_EQ(
      flatbuffers::GetRoot<aos::testing::Leaf>(buffer->data())->name()->str(),
      "leaf");
  EXPECT_FALSE(
      JsonToFlatbuffer("{}", Schema(), {.table_name = "aos.testing.Nope"})
          .ok());
}

}  // namespace
}  // namespace aos
