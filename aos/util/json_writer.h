#ifndef AOS_UTIL_JSON_WRITER_H_
#define AOS_UTIL_JSON_WRITER_H_

// JsonWriter builds one strict JSON text (RFC 8259) in memory, call by call,
// so that nothing written by hand can leave a quote unescaped or a NaN in a
// file that a strict reader then refuses.
//
// ```
//   aos::JsonWriter json;
//   json.BeginObject();
//   json.Key("name").String("ping \"timer\"");
//   json.Key("avg_us").Number(3.25);
//   json.Key("counts").BeginArray().Number(1).Number(2).EndArray();
//   json.EndObject();
//   std::cout << json.Text();
//   // {"name":"ping \"timer\"","avg_us":3.25,"counts":[1,2]}
// ```
//
// What the text holds:
// - Strings and keys are escaped as RFC 8259 requires: `"` and `\` with a
//   backslash, the control characters U+0000-U+001F as \b \f \n \r \t or
//   \u00XX. Every other byte, non-ASCII UTF-8 included, is copied as it is:
//   give it UTF-8.
// - Integers are written exactly, over the whole range of int64_t and
//   uint64_t (a reader that holds numbers as doubles may round beyond 2^53).
// - Doubles are written in the shortest form that reads back to the same
//   double (std::to_chars). NaN and the infinities, which JSON cannot hold,
//   are written as null.
// - Keys are written in the order given; the writer does not check that
//   they are unique.
//
// Misuse is a programming error and aborts with a message that names the
// call: a value in an object without Key() before it, Key() outside an
// object or twice in a row, an End*() that closes nothing or the other kind
// of container, a second top-level value, Text() before the one top-level
// value is complete.
//
// Cost: appends to one std::string, which allocates as it grows; not for
// realtime paths.

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace aos {

class JsonWriter {
 public:
  // `indent` 0 writes everything on one line without spaces; `indent` > 0
  // starts every member and element on a new line, indented by `indent`
  // spaces per level, with a space after each colon.
  explicit JsonWriter(int indent = 0);

  // Starts an object or an array as the next value; End*() closes it.
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();

  // The name of the next member of the object being written; the value
  // follows with one of the calls below or Begin*().
  JsonWriter& Key(std::string_view key);

  // The next value.
  JsonWriter& String(std::string_view value);
  // NaN and +-infinity as null; otherwise the shortest exact form.
  JsonWriter& Number(double value);
  // Any integer type but bool, exactly.
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& Number(T value) {
    if constexpr (std::is_signed_v<T>) {
      return Integer(static_cast<int64_t>(value));
    } else {
      return Unsigned(static_cast<uint64_t>(value));
    }
  }
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // The text: one complete top-level value, without a trailing newline.
  const std::string& Text() const;

 private:
  struct Container {
    bool object;
    bool empty = true;
    // In an object: Key() was called and its value is due.
    bool key_written = false;
  };

  JsonWriter& Integer(int64_t value);
  JsonWriter& Unsigned(uint64_t value);
  // Writes `text` (a number or literal) as the next value.
  JsonWriter& Scalar(std::string_view what, std::string_view text);
  // Checks that a value may come now and writes what separates it from the
  // one before; `what` names the call for the misuse message.
  void BeforeValue(std::string_view what);
  // Marks the top-level value complete when no container is open.
  void AfterValue();
  // A new line and the indentation of the current depth (with indent > 0).
  void NewLine();
  JsonWriter& Begin(bool object);
  JsonWriter& End(bool object);
  void AppendEscaped(std::string_view text);

  const int indent_;
  std::string text_;
  std::vector<Container> open_;
  bool complete_ = false;
};

}  // namespace aos

#endif  // AOS_UTIL_JSON_WRITER_H_
