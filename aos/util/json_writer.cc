#include "aos/util/json_writer.h"

#include <cmath>

#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos {

JsonWriter::JsonWriter(int indent) : indent_(indent) {
  CHECK_GE(indent, 0) << "JsonWriter: indent must not be negative";
}

JsonWriter& JsonWriter::BeginObject() { return Begin(/*object=*/true); }
JsonWriter& JsonWriter::EndObject() { return End(/*object=*/true); }
JsonWriter& JsonWriter::BeginArray() { return Begin(/*object=*/false); }
JsonWriter& JsonWriter::EndArray() { return End(/*object=*/false); }

JsonWriter& JsonWriter::Key(std::string_view key) {
  CHECK(!open_.empty() && open_.back().object)
      << "JsonWriter: Key(\"" << key << "\") outside an object";
  Container& object = open_.back();
  CHECK(!object.key_written)
      << "JsonWriter: Key(\"" << key
      << "\") right after another Key(): write the first one's value";
  if (!object.empty) text_.push_back(',');
  object.empty = false;
  object.key_written = true;
  NewLine();
  AppendEscaped(key);
  text_.push_back(':');
  if (indent_ > 0) text_.push_back(' ');
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue("String()");
  AppendEscaped(value);
  AfterValue();
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  if (!std::isfinite(value)) return Null();
  return Scalar("Number()", StrCat(value));
}

JsonWriter& JsonWriter::Integer(int64_t value) {
  return Scalar("Number()", StrCat(value));
}

JsonWriter& JsonWriter::Unsigned(uint64_t value) {
  return Scalar("Number()", StrCat(value));
}

JsonWriter& JsonWriter::Bool(bool value) {
  return Scalar("Bool()", value ? "true" : "false");
}

JsonWriter& JsonWriter::Null() { return Scalar("Null()", "null"); }

JsonWriter& JsonWriter::Scalar(std::string_view what, std::string_view text) {
  BeforeValue(what);
  text_.append(text);
  AfterValue();
  return *this;
}

const std::string& JsonWriter::Text() const {
  CHECK(complete_) << "JsonWriter: Text() before the value is complete ("
                   << open_.size() << " container(s) still open)";
  return text_;
}

void JsonWriter::BeforeValue(std::string_view what) {
  if (open_.empty()) {
    CHECK(!complete_) << "JsonWriter: " << what
                      << " after the top-level value was complete: a JSON "
                         "text holds one value";
    return;
  }
  Container& container = open_.back();
  if (container.object) {
    CHECK(container.key_written)
        << "JsonWriter: " << what << " in an object without Key() before it";
    container.key_written = false;
    return;
  }
  if (!container.empty) text_.push_back(',');
  container.empty = false;
  NewLine();
}

void JsonWriter::AfterValue() {
  if (open_.empty()) complete_ = true;
}

void JsonWriter::NewLine() {
  if (indent_ == 0) return;
  text_.push_back('\n');
  text_.append(open_.size() * static_cast<size_t>(indent_), ' ');
}

JsonWriter& JsonWriter::Begin(bool object) {
  BeforeValue(object ? "BeginObject()" : "BeginArray()");
  text_.push_back(object ? '{' : '[');
  open_.push_back({.object = object});
  return *this;
}

JsonWriter& JsonWriter::End(bool object) {
  const char* call = object ? "EndObject()" : "EndArray()";
  CHECK(!open_.empty()) << "JsonWriter: " << call << " with nothing open";
  const Container container = open_.back();
  CHECK_EQ(container.object, object) << "JsonWriter: " << call << " closes an "
                                     << (container.object ? "object" : "array");
  CHECK(!container.key_written)
      << "JsonWriter: EndObject() right after Key(): write its value";
  open_.pop_back();
  if (!container.empty) NewLine();
  text_.push_back(object ? '}' : ']');
  AfterValue();
  return *this;
}

void JsonWriter::AppendEscaped(std::string_view text) {
  // RFC 8259's two-character escapes, and the letter after each backslash.
  constexpr std::string_view kEscaped = "\"\\\b\f\n\r\t";
  constexpr std::string_view kLetters = "\"\\bfnrt";
  constexpr char kHex[] = "0123456789abcdef";
  text_.push_back('"');
  for (const char c : text) {
    const size_t escape = kEscaped.find(c);
    if (escape != std::string_view::npos) {
      text_.push_back('\\');
      text_.push_back(kLetters[escape]);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      text_.append("\\u00");
      text_.push_back(kHex[(c >> 4) & 0xf]);
      text_.push_back(kHex[c & 0xf]);
    } else {
      text_.push_back(c);
    }
  }
  text_.push_back('"');
}

}  // namespace aos
