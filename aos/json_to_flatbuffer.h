#ifndef AOS_JSON_TO_FLATBUFFER_H_
#define AOS_JSON_TO_FLATBUFFER_H_

// JSON <-> flatbuffer for any table, given its reflection schema.
//
//   const reflection::Schema *schema = reflection::GetSchema(bfbs_bytes);
//   absl::StatusOr<flatbuffers::DetachedBuffer> buffer =
//       aos::JsonToFlatbuffer(R"({ "value": 971 })", *schema);
//   std::string json = aos::FlatbufferToJson(buffer->data(), *schema);
//
// Printing is strict JSON (RFC 8259) by default: finite numbers, strings,
// vectors, nested tables, structs, unions and enums (by name). NaN and
// infinities, which JSON cannot hold, print as null; reading a member whose
// value is null leaves the field unset, so it reads back as its default
// (NaN for a timing report's empty statistic), or, with
// non_finite_as_strings, as the strings "nan", "inf", "-inf", which read
// back as themselves. The round trip is exact for
// everything else: integers at full width, floats and doubles with the
// fewest digits that read back to the same bits. With strict_json = false
// NaN and infinities print as nan, inf, -inf, flatbuffers' dialect, and
// round-trip exactly too. Reading accepts that dialect as AOS does: field
// names may be unquoted, enum values may be names or numbers, nan/inf and
// null are accepted. Strings, field names and enum names print with every
// control character escaped (DEL and C1 included), so printed JSON is safe
// on a terminal whatever the buffer or the schema holds.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/reflection.h"

namespace aos {

struct JsonToFlatbufferOptions {
  // Named in error messages, e.g. the file the JSON came from.
  std::string_view source_name = "JSON";
  // The table type to parse, fully qualified ("aos.Channel"); empty for the
  // schema's root table.
  std::string_view table_name = {};
};

// Parses `json` into a finished flatbuffer whose root is the chosen table.
// Every field written in the JSON is stored, even when it equals the default,
// so later merges can tell "set to the default" from "not set".
// Errors (InvalidArgument) name options.source_name, the line and column, and
// what was wrong (unknown field, type mismatch, malformed JSON, ...).
// Allocates; not for realtime code.
absl::StatusOr<flatbuffers::DetachedBuffer> JsonToFlatbuffer(
    std::string_view json, const reflection::Schema& schema,
    const JsonToFlatbufferOptions& options = {});

struct FlatbufferToJsonOptions {
  // One field per line, indented by two spaces a level.
  bool multi_line = false;
  // Vectors longer than this print as "[ ... N elements ... ]", which does not
  // parse back; keep the default for a round trip.
  size_t max_vector_size = SIZE_MAX;
  // RFC 8259: NaN and infinities print as null. false: as nan, inf, -inf.
  bool strict_json = true;
  // With strict_json: NaN and infinities print as the strings "nan", "inf"
  // and "-inf" instead of null, which JsonToFlatbuffer reads back as the
  // same values (flatbuffers reads a number written as a string): strict
  // JSON that round-trips exactly, but for the sign of a NaN. For what must
  // read back, like a configuration (its schemas' NaN defaults).
  bool non_finite_as_strings = false;
};

// Prints the table `table` of type `object` (from `schema`) as JSON. Only
// fields present in the buffer are printed. `table` must be a valid table of
// that type (verify untrusted buffers first).
std::string TableFlatbufferToJson(const flatbuffers::Table* table,
                                  const reflection::Schema& schema,
                                  const reflection::Object& object,
                                  const FlatbufferToJsonOptions& options = {});

// Prints the finished flatbuffer `buffer`, whose root is the schema's root
// table, as JSON. Aborts with a message if the schema has no root table.
std::string FlatbufferToJson(const uint8_t* buffer,
                             const reflection::Schema& schema,
                             const FlatbufferToJsonOptions& options = {});

}  // namespace aos

#endif  // AOS_JSON_TO_FLATBUFFER_H_
