#include "aos/util/json_document.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "aos/util/str_cat.h"
#include "flatbuffers/idl.h"

namespace aos {

struct JsonValue::Storage {
  std::string source;
  std::vector<uint8_t> buffer;
};

namespace {

std::string_view Kind(const flexbuffers::Reference& ref) {
  if (ref.IsNull()) return "null";
  if (ref.IsBool()) return "a boolean";
  if (ref.IsNumeric()) return "a number";
  if (ref.IsString()) return "a string";
  if (ref.IsMap()) return "an object";
  if (ref.IsVector()) return "an array";
  return "a FlexBuffer value JSON does not have";
}

}  // namespace

JsonValue::JsonValue(std::shared_ptr<const Storage> storage,
                     flexbuffers::Reference ref, std::string path,
                     absl::Status status)
    : storage_(std::move(storage)),
      ref_(ref),
      path_(std::move(path)),
      status_(std::move(status)) {}

const std::string& JsonValue::path() const {
  static const std::string kTop = "the top level";
  return path_.empty() ? kTop : path_;
}

const std::string& JsonValue::source() const { return storage_->source; }

JsonValue JsonValue::operator[](std::string_view key) const {
  const std::string path = Child(key);
  if (!exists()) return JsonValue(storage_, ref_, path, status_);
  if (!ref_.IsMap())
    return JsonValue(storage_, ref_, path, WrongType("an object"));
  const flexbuffers::Map map = ref_.AsMap();
  const flexbuffers::TypedVector keys = map.Keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].AsKey() == key) {
      return JsonValue(storage_, map.Values()[i], path, absl::OkStatus());
    }
  }
  return JsonValue(
      storage_, ref_, path,
      absl::NotFoundError(StrCat(storage_->source, ": ", path, " is missing")));
}

JsonValue JsonValue::At(size_t index) const {
  const std::string path = StrCat(path_, "[", index, "]");
  if (!exists()) return JsonValue(storage_, ref_, path, status_);
  if (!ref_.IsUntypedVector()) {
    return JsonValue(storage_, ref_, path, WrongType("an array"));
  }
  const flexbuffers::Vector vector = ref_.AsVector();
  if (index >= vector.size()) {
    return JsonValue(storage_, ref_, path,
                     absl::NotFoundError(StrCat(
                         storage_->source, ": ", path, " is missing (",
                         this->path(), " has ", vector.size(), " elements)")));
  }
  return JsonValue(storage_, vector[index], path, absl::OkStatus());
}

bool JsonValue::IsNull() const { return exists() && ref_.IsNull(); }

absl::StatusOr<double> JsonValue::Number() const {
  if (!exists()) return status_;
  if (!ref_.IsNumeric()) return WrongType("a number");
  return ref_.AsDouble();
}

absl::StatusOr<double> JsonValue::NumberOrNan() const {
  if (IsNull()) return std::nan("");
  return Number();
}

absl::StatusOr<int64_t> JsonValue::Integer() const {
  if (!exists()) return status_;
  if (ref_.IsInt()) return ref_.AsInt64();
  if (ref_.IsUInt() &&
      ref_.AsUInt64() <=
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(ref_.AsUInt64());
  }
  if (ref_.IsFloat()) {
    const double value = ref_.AsDouble();
    // 2^63 itself does not fit; every double below it that is whole does.
    if (value == std::trunc(value) && value >= -9223372036854775808.0 &&
        value < 9223372036854775808.0) {
      return static_cast<int64_t>(value);
    }
  }
  return WrongType("an integer that fits 64 bits");
}

absl::StatusOr<bool> JsonValue::Boolean() const {
  if (!exists()) return status_;
  if (!ref_.IsBool()) return WrongType("true or false");
  return ref_.AsBool();
}

absl::StatusOr<std::string> JsonValue::String() const {
  if (!exists()) return status_;
  if (!ref_.IsString()) return WrongType("a string");
  return ref_.AsString().str();
}

absl::StatusOr<std::vector<std::pair<std::string, JsonValue>>>
JsonValue::Members() const {
  if (!exists()) return status_;
  if (!ref_.IsMap()) return WrongType("an object");
  const flexbuffers::Map map = ref_.AsMap();
  const flexbuffers::TypedVector keys = map.Keys();
  const flexbuffers::Vector values = map.Values();
  std::vector<std::pair<std::string, JsonValue>> members;
  members.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string key = keys[i].AsKey();
    JsonValue value(storage_, values[i], Child(key), absl::OkStatus());
    members.emplace_back(std::move(key), std::move(value));
  }
  return members;
}

absl::StatusOr<std::vector<JsonValue>> JsonValue::Elements() const {
  if (!exists()) return status_;
  if (!ref_.IsUntypedVector()) return WrongType("an array");
  const flexbuffers::Vector vector = ref_.AsVector();
  std::vector<JsonValue> elements;
  elements.reserve(vector.size());
  for (size_t i = 0; i < vector.size(); ++i) elements.push_back(At(i));
  return elements;
}

std::string JsonValue::Child(std::string_view key) const {
  return path_.empty() ? std::string(key) : StrCat(path_, ".", key);
}

absl::Status JsonValue::WrongType(std::string_view wanted) const {
  return absl::InvalidArgumentError(StrCat(
      storage_->source, ": ", path(), " is ", Kind(ref_), ", not ", wanted));
}

absl::StatusOr<JsonDocument> JsonDocument::Parse(std::string_view json,
                                                 std::string source) {
  auto storage = std::make_shared<JsonValue::Storage>();
  storage->source = std::move(source);
  // The parser wants a NUL-terminated text.
  const std::string text(json);
  flatbuffers::Parser parser;
  flexbuffers::Builder builder;
  if (!parser.ParseFlexBuffer(text.c_str(), storage->source.c_str(),
                              &builder)) {
    return absl::InvalidArgumentError(
        StrCat(storage->source, ": not JSON: ", parser.error_));
  }
  storage->buffer = builder.GetBuffer();
  return JsonDocument(std::move(storage));
}

absl::StatusOr<JsonDocument> JsonDocument::ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        StrCat(path, ": cannot read: ", std::strerror(errno)));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  return Parse(contents.str(), path);
}

JsonValue JsonDocument::root() const {
  return JsonValue(storage_, flexbuffers::GetRoot(storage_->buffer), "",
                   absl::OkStatus());
}

absl::Status ReadNumbers(
    const JsonValue& object,
    std::initializer_list<std::pair<std::string_view, double*>> fields,
    bool null_is_nan) {
  for (const auto& [key, field] : fields) {
    const absl::StatusOr<double> number =
        null_is_nan ? object[key].NumberOrNan() : object[key].Number();
    if (!number.ok()) return number.status();
    *field = *number;
  }
  return absl::OkStatus();
}

}  // namespace aos
