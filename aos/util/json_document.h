#ifndef AOS_UTIL_JSON_DOCUMENT_H_
#define AOS_UTIL_JSON_DOCUMENT_H_

// JSON written by other programs (rt-tests' --json files, Google Benchmark's
// --benchmark_format=json, our benchmarks' own), read with a real parser:
// flatbuffers' schema-less one (flatbuffers::Parser::ParseFlexBuffer) turns
// the text into a FlexBuffer, and JsonValue walks it with errors that name
// the file and the path of what is missing or of the wrong type.
//
// ```
//   absl::StatusOr<JsonDocument> doc = JsonDocument::ReadFile(path);
//   if (!doc.ok()) return doc.status();
//   absl::StatusOr<double> avg =
//       doc->root()["thread"]["0"]["receiver"]["avg"].Number();
//   // not ok: "/tmp/x.json: thread.0.receiver.avg is missing"
// ```
//
// Lookups chain without checks in between: looking up in a value that is
// missing (or of the wrong type) gives a missing value that remembers the
// first failure, and the typed accessors at the end return it as the error.
// Values share ownership of the parsed buffer: they stay valid after the
// document is gone. Not for realtime paths (parsing allocates).

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flatbuffers/flexbuffers.h"

namespace aos {

// One value in a parsed JSON text, or a missing one with the reason.
class JsonValue {
 public:
  // The member `key` of this object; missing if there is none, or if this
  // is not an object.
  JsonValue operator[](std::string_view key) const;
  // Element `index` of this array; missing if out of range, or if this is
  // not an array.
  JsonValue At(size_t index) const;

  // Whether the value is there; when not, status() says why.
  bool exists() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  // Where the value is: "thread.0.receiver.min", "benchmarks[1].name", or
  // "the top level".
  const std::string& path() const;
  // The name of the text it is in (JsonDocument's `source`), for errors of
  // the caller's own.
  const std::string& source() const;

  bool IsNull() const;
  // A JSON number (integer or not), as a double; an error for anything else.
  absl::StatusOr<double> Number() const;
  // Number(), with null read as NaN: the way aos::JsonWriter writes NaN.
  absl::StatusOr<double> NumberOrNan() const;
  // A JSON number without a fraction that fits int64_t.
  absl::StatusOr<int64_t> Integer() const;
  // JSON's true or false; an error for anything else (0 and 1 included).
  absl::StatusOr<bool> Boolean() const;
  absl::StatusOr<std::string> String() const;
  // An object's members, ordered by key (byte-wise, as FlexBuffers keeps
  // them: "10" before "9").
  absl::StatusOr<std::vector<std::pair<std::string, JsonValue>>> Members()
      const;
  // An array's elements, in order.
  absl::StatusOr<std::vector<JsonValue>> Elements() const;

 private:
  friend class JsonDocument;
  struct Storage;

  JsonValue(std::shared_ptr<const Storage> storage, flexbuffers::Reference ref,
            std::string path, absl::Status status);
  // An error "<source>: <path> is <what it is>, not <wanted>".
  absl::Status WrongType(std::string_view wanted) const;
  // The path of member `key`.
  std::string Child(std::string_view key) const;

  std::shared_ptr<const Storage> storage_;
  flexbuffers::Reference ref_;
  std::string path_;
  absl::Status status_;
};

class JsonDocument {
 public:
  // Parses `json`; `source` names it in every error (a file name, or
  // "ping's --summary_json output"). An error gives the parser's message
  // with its line.
  static absl::StatusOr<JsonDocument> Parse(std::string_view json,
                                            std::string source);
  // Reads and parses the file at `path`, which names it in errors.
  static absl::StatusOr<JsonDocument> ReadFile(const std::string& path);

  JsonValue root() const;

 private:
  explicit JsonDocument(std::shared_ptr<const JsonValue::Storage> storage)
      : storage_(std::move(storage)) {}

  std::shared_ptr<const JsonValue::Storage> storage_;
};

// Reads the members `fields` of `object` as numbers, each into the double
// given beside its key; null reads as NaN when `null_is_nan`. Returns the
// first error (what is missing or not a number), leaving the doubles before
// it written.
absl::Status ReadNumbers(
    const JsonValue& object,
    std::initializer_list<std::pair<std::string_view, double*>> fields,
    bool null_is_nan = false);

}  // namespace aos

#endif  // AOS_UTIL_JSON_DOCUMENT_H_
