#include "aos/util/json_writer.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>

#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(JsonWriterTest, WritesObjectsArraysAndScalarsOnOneLine) {
  JsonWriter json;
  json.BeginObject();
  json.Key("name").String("ping");
  json.Key("avg_us").Number(3.25);
  json.Key("counts").BeginArray().Number(1).Number(2u).EndArray();
  json.Key("ok").Bool(true);
  json.Key("none").Null();
  json.Key("empty").BeginObject().EndObject();
  json.Key("nothing").BeginArray().EndArray();
  json.EndObject();
  EXPECT_EQ(json.Text(),
            R"({"name":"ping","avg_us":3.25,"counts":[1,2],"ok":true,)"
            R"("none":null,"empty":{},"nothing":[]})");
}

TEST(JsonWriterTest, IndentsEveryMemberAndElementOnItsOwnLine) {
  JsonWriter json(2);
  json.BeginObject();
  json.Key("a").Number(1);
  json.Key("b").BeginArray().Number(2).BeginObject().EndObject().EndArray();
  json.EndObject();
  EXPECT_EQ(json.Text(),
            "{\n"
            "  \"a\": 1,\n"
            "  \"b\": [\n"
            "    2,\n"
            "    {}\n"
            "  ]\n"
            "}");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  JsonWriter json;
  json.BeginArray();
  json.String("say \"hi\"");
  json.String("C:\\dir");
  json.String("line\nnext\ttab\rcr\bbs\ffeed");
  json.String(std::string_view("\0\x01\x1f", 3));
  json.String("5 \xc2\xb5s");  // UTF-8 passes through.
  json.EndArray();
  EXPECT_EQ(json.Text(),
            R"(["say \"hi\"","C:\\dir","line\nnext\ttab\rcr\bbs\ffeed",)"
            R"("\u0000\u0001\u001f","5 )"
            "\xc2\xb5"
            R"(s"])");
}

TEST(JsonWriterTest, NoControlCharacterIsWrittenRaw) {
  std::string all;
  for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
  JsonWriter json;
  json.String(all);
  for (const char c : json.Text()) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20) << json.Text();
  }
}

TEST(JsonWriterTest, KeysAreEscapedToo) {
  JsonWriter json;
  json.BeginObject().Key("a\"b\\c\n").Number(1).EndObject();
  EXPECT_EQ(json.Text(), R"({"a\"b\\c\n":1})");
}

TEST(JsonWriterTest, NanAndInfinitiesAreNull) {
  JsonWriter json;
  json.BeginArray()
      .Number(std::nan(""))
      .Number(std::numeric_limits<double>::infinity())
      .Number(-std::numeric_limits<double>::infinity())
      .EndArray();
  EXPECT_EQ(json.Text(), "[null,null,null]");
}

TEST(JsonWriterTest, IntegersAreExactAndDoublesShortest) {
  JsonWriter json;
  json.BeginArray()
      .Number(std::numeric_limits<int64_t>::min())
      .Number(std::numeric_limits<int64_t>::max())
      .Number(std::numeric_limits<uint64_t>::max())
      .Number(static_cast<int16_t>(-7))
      .Number(0.1)
      .Number(3.0)
      .Number(-0.5)
      .Number(1e300)
      .EndArray();
  EXPECT_EQ(json.Text(),
            "[-9223372036854775808,9223372036854775807,18446744073709551615,"
            "-7,0.1,3,-0.5,1e+300]");
}

TEST(JsonWriterTest, ATopLevelScalarIsAText) {
  JsonWriter json;
  json.String("alone");
  EXPECT_EQ(json.Text(), R"("alone")");
}

TEST(JsonWriterDeathTest, MisuseNamesTheCall) {
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.BeginObject().Number(1);
      },
      "Number\\(\\) in an object without Key\\(\\)");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.BeginArray().Key("k");
      },
      "Key\\(\"k\"\\) outside an object");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.BeginObject().Key("a").Key("b");
      },
      "right after another Key");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.BeginObject().EndArray();
      },
      "EndArray\\(\\) closes an object");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.EndObject();
      },
      "EndObject\\(\\) with nothing open");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.BeginArray();
        (void)json.Text();
      },
      "Text\\(\\) before the value is complete");
  EXPECT_DEATH(
      {
        JsonWriter json;
        json.Number(1).Number(2);
      },
      "a JSON text holds one value");
}

// Python's json module, told to refuse NaN and Infinity, reads the text
// back to the values written.
TEST(JsonWriterTest, AStrictReaderReadsItBack) {
  constexpr const char* kPython = "/usr/bin/python3";
  if (access(kPython, X_OK) != 0) {
    GTEST_SKIP() << kPython << " is not installed: the strict reader is "
                 << "Python's json module";
  }
  JsonWriter json(2);
  json.BeginObject();
  json.Key("quote").String("a\"b");
  json.Key("backslash").String("c\\d");
  json.Key("controls").String(std::string_view("\0\x01\x1f\n\t", 5));
  json.Key("utf8").String("\xc2\xb5s");
  json.Key("nan").Number(std::nan(""));
  json.Key("inf").Number(std::numeric_limits<double>::infinity());
  json.Key("int_min").Number(std::numeric_limits<int64_t>::min());
  json.Key("uint_max").Number(std::numeric_limits<uint64_t>::max());
  json.Key("tenth").Number(0.1);
  json.EndObject();
  const std::string dir = testing::TestTempDir();
  const std::string path = dir + "/strict.json";
  std::ofstream(path) << json.Text();
  Subprocess python(kPython,
                    {"-c",
                     "import json, sys\n"
                     "def refuse(c): raise ValueError(c)\n"
                     "d = json.load(open(sys.argv[1]), parse_constant=refuse)\n"
                     "print(json.dumps(d, sort_keys=True))\n",
                     path},
                    dir);
  ASSERT_EQ(python.Wait(), 0) << python.Stderr();
  EXPECT_EQ(python.Stdout(),
            R"({"backslash": "c\\d", "controls": "\u0000\u0001\u001f\n\t", )"
            R"("inf": null, "int_min": -9223372036854775808, "nan": null, )"
            R"("quote": "a\"b", "tenth": 0.1, "uint_max": )"
            R"(18446744073709551615, "utf8": "\u00b5s"})"
            "\n");
}

}  // namespace
}  // namespace aos
