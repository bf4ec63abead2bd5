#include "aos/flatbuffer_merge.h"

#include "aos/json_to_flatbuffer.h"
#include "aos/testdata/everything.h"
#include "aos/testdata/everything_generated.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

const reflection::Schema& Schema() { return aos::testing::EverythingSchema(); }

flatbuffers::DetachedBuffer Parse(std::string_view json) {
  return aos::testing::ParseEverything(json);
}

const flatbuffers::Table* Root(const flatbuffers::DetachedBuffer& buffer) {
  return flatbuffers::GetAnyRoot(buffer.data());
}

std::string Merge(std::initializer_list<const flatbuffers::Table*> layers) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<const flatbuffers::Table*> list(layers);
  fbb.Finish(
      MergeFlatbufferTables(&fbb, Schema(), *Schema().root_table(), list));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  EXPECT_TRUE(verifier.VerifyBuffer<aos::testing::Everything>(nullptr));
  return FlatbufferToJson(fbb.GetBufferPointer(), Schema());
}

constexpr std::string_view kEverything = R"({
  "b": true, "i8": -1, "u64": 18446744073709551615, "f32": 0.5, "f64": nan,
  "text": "hello", "color": "Blue", "features": "Safe",
  "point": { "x": 1.5, "y": 2.5, "tag": 3 },
  "leaf": { "name": "leaf", "weight": 1.25 },
  "ints": [ 1, 2, 3 ], "doubles": [ 0.1 ], "strings": [ "a", "b" ],
  "leaves": [ { "name": "x" }, { "weight": 2.0 } ],
  "points": [ { "x": 1, "y": 2, "tag": 3 } ], "colors": [ "Red", "Blue" ],
  "thing_type": "Leaf", "thing": { "name": "in union" }, "defaulted": 42,
  "bytes": [ 1, 2, 255 ] })";

TEST(FlatbufferMergeTest, CopyReproducesEveryKindOfField) {
  const flatbuffers::DetachedBuffer original = Parse(kEverything);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(CopyFlatbufferTable(&fbb, Schema(), *Schema().root_table(),
                                 *Root(original)));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  ASSERT_TRUE(verifier.VerifyBuffer<aos::testing::Everything>(nullptr));
  EXPECT_EQ(FlatbufferToJson(fbb.GetBufferPointer(), Schema()),
            FlatbufferToJson(original.data(), Schema()));
}

TEST(FlatbufferMergeTest, LaterLayersWinFieldByField) {
  const flatbuffers::DetachedBuffer first = Parse(
      R"({ "i8": 1, "text": "first", "ints": [ 1, 2 ], "leaf": { "name": "a" } })");
  const flatbuffers::DetachedBuffer second =
      Parse(R"({ "i8": 2, "ints": [ 9 ], "leaf": { "weight": 3.0 } })");
  // Sub-tables and vectors are replaced whole, not merged.
  EXPECT_EQ(
      Merge({Root(first), Root(second)}),
      R"({ "i8": 2, "text": "first", "leaf": { "weight": 3 }, "ints": [ 9 ] })");
  EXPECT_EQ(
      Merge({Root(second), Root(first)}),
      R"({ "i8": 1, "text": "first", "leaf": { "name": "a" }, "ints": [ 1, 2 ] })");
}

TEST(FlatbufferMergeTest, ExplicitDefaultOverridesButAbsentDoesNot) {
  const flatbuffers::DetachedBuffer first =
      Parse(R"({ "defaulted": 7, "color": "Blue" })");
  const flatbuffers::DetachedBuffer second = Parse(R"({ "defaulted": 42 })");
  EXPECT_EQ(Merge({Root(first), Root(second)}),
            R"({ "color": "Blue", "defaulted": 42 })");
}

TEST(FlatbufferMergeTest, UnionTypeFollowsItsValue) {
  const flatbuffers::DetachedBuffer first =
      Parse(R"({ "thing_type": "Leaf", "thing": { "name": "leaf" } })");
  const flatbuffers::DetachedBuffer second =
      Parse(R"({ "thing_type": "Other", "thing": { "note": "other" } })");
  EXPECT_EQ(Merge({Root(first), Root(second)}),
            R"({ "thing_type": "Other", "thing": { "note": "other" } })");
}

TEST(FlatbufferMergeTest, NullAndNoLayersGiveEmptyTable) {
  const flatbuffers::DetachedBuffer only = Parse(R"({ "u8": 5 })");
  EXPECT_EQ(Merge({}), "{}");
  EXPECT_EQ(Merge({nullptr, Root(only), nullptr}), R"({ "u8": 5 })");
}

}  // namespace
}  // namespace aos
