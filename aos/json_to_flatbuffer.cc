#include "aos/json_to_flatbuffer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "flatbuffers/idl.h"
#include "glog/logging.h"

namespace aos {

namespace {

// The most bytes of flatbuffers' own error text kept in a message.
constexpr size_t kErrorMaxBytes = 400;

// Turns flatbuffers' "<line>: <column>: error: <what>" into
// "<source>:<line>:<column>: <what>" followed by the offending line with a
// caret under the column, since flatbuffers does not always name the field.
std::string DescribeParseError(std::string_view text,
                               std::string_view source_name,
                               std::string error) {
  while (!error.empty() && error.back() == '\n') error.pop_back();
  int line = 0;
  int column = 0;
  int consumed = 0;
  if (sscanf(error.c_str(), "%d: %d: error: %n", &line, &column, &consumed) <
          2 ||
      consumed == 0 || line < 1) {
    return StrCat(source_name, ": ", InlinePrintable(error, kErrorMaxBytes));
  }
  // flatbuffers' error may quote the input (an unknown field's name): it is
  // escaped and bounded like any text from a file.
  std::string result =
      StrCat(source_name, ":", line, ":", column, ": ",
             InlinePrintable(std::string_view(error).substr(consumed),
                             kErrorMaxBytes));
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return result;
    ++start;
  }
  const std::string_view quoted =
      text.substr(start, text.find('\n', start) - start);
  if (quoted.size() > 200) return result;
  // Only a line a terminal shows as it is (tabs keep the caret aligned).
  for (const char c : quoted) {
    if ((c < 0x20 && c != '\t') || c > 0x7e) return result;
  }
  // flatbuffers' column is just past the token it choked on.
  const size_t caret = std::min<size_t>(std::max(column - 1, 0), quoted.size());
  StrAppend(&result, "\n  ", quoted, "\n  ");
  for (size_t i = 0; i < caret; ++i) result += quoted[i] == '\t' ? '\t' : ' ';
  result += '^';
  return result;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// `json` with every object member whose value is null blanked out (with
// its comma), so flatbuffers' parser, which has no null, leaves the field
// unset. Blanked, not removed: lines and columns of errors stay right.
std::string DropNullMembers(std::string_view json) {
  std::string text(json);
  // Per open bracket: '{' or '['; for objects, where the current member
  // starts and the comma before it (npos for the first member).
  struct Open {
    char bracket;
    size_t member_start;
    size_t comma;
  };
  std::vector<Open> open;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back({c, i + 1, std::string::npos});
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back().bracket == '{') {
      open.back().comma = i;
      open.back().member_start = i + 1;
    } else if (c == 'n' && !open.empty() && open.back().bracket == '{' &&
               text.compare(i, 4, "null") == 0 &&
               (i + 4 == text.size() || !isalnum(text[i + 4]))) {
      size_t before = i;
      while (before > 0 && IsSpace(text[before - 1])) --before;
      if (before > 0 && text[before - 1] == ':') {
        size_t after = i + 4;
        while (after < text.size() && IsSpace(text[after])) ++after;
        Open& object = open.back();
        size_t blank_from = object.member_start;
        size_t blank_to = i + 4;
        if (after < text.size() && text[after] == ',') {
          blank_to = after + 1;  // The next member starts where this did.
        } else if (object.comma != std::string::npos) {
          blank_from = object.comma;  // The last member: drop its comma.
        }
        for (size_t k = blank_from; k < blank_to; ++k) {
          if (!IsSpace(text[k])) text[k] = ' ';
        }
        i = blank_to;
        continue;
      }
    }
    ++i;
  }
  return text;
}

}  // namespace

absl::StatusOr<flatbuffers::DetachedBuffer> JsonToFlatbuffer(
    std::string_view json, const reflection::Schema& schema,
    const JsonToFlatbufferOptions& options) {
  flatbuffers::IDLOptions idl_options;
  // Keep explicit defaults so merges can see them.
  idl_options.force_defaults = true;
  flatbuffers::Parser parser(idl_options);
  if (!parser.Deserialize(&schema)) {
    return absl::InternalError(
        StrCat(options.source_name, ": unusable reflection schema"));
  }
  if (!options.table_name.empty()) {
    const std::string table_name(options.table_name);
    if (!parser.SetRootType(table_name.c_str())) {
      return absl::InvalidArgumentError(StrCat(
          options.source_name, ": the schema has no table ", table_name));
    }
  } else if (parser.root_struct_def_ == nullptr) {
    return absl::InvalidArgumentError(StrCat(
        options.source_name, ": the schema has no root table to parse into"));
  }
  const std::string text = DropNullMembers(json);
  if (!parser.ParseJson(text.c_str(), nullptr)) {
    return absl::InvalidArgumentError(
        DescribeParseError(text, options.source_name, parser.error_));
  }
  return parser.builder_.Release();
}

namespace {

using flatbuffers::Table;

class JsonPrinter {
 public:
  JsonPrinter(const reflection::Schema& schema,
              const FlatbufferToJsonOptions& options)
      : schema_(schema), options_(options) {}

  std::string Finish() { return std::move(out_); }

  void PrintTable(const Table* table, const reflection::Object& object) {
    const std::vector<const reflection::Field*> fields = FieldsById(object);
    out_ += '{';
    ++depth_;
    bool first = true;
    for (const reflection::Field* field : fields) {
      if (field->deprecated() || !table->CheckField(field->offset())) continue;
      StartMember(&first, *field);
      PrintTableField(table, object, *field);
    }
    --depth_;
    EndAggregate(first, '}');
  }

 private:
  static std::vector<const reflection::Field*> FieldsById(
      const reflection::Object& object) {
    std::vector<const reflection::Field*> fields(object.fields()->size());
    for (const reflection::Field* field : *object.fields()) {
      if (field->id() < fields.size()) fields[field->id()] = field;
    }
    std::erase(fields, nullptr);
    return fields;
  }

  void NewLine() {
    out_ += '\n';
    out_.append(2 * depth_, ' ');
  }

  void StartMember(bool* first, const reflection::Field& field) {
    if (!*first) out_ += ',';
    *first = false;
    if (options_.multi_line) {
      NewLine();
    } else {
      out_ += ' ';
    }
    AppendString(field.name()->string_view());
    out_ += ": ";
  }

  void StartElement(bool* first) {
    if (!*first) out_ += ',';
    *first = false;
    if (options_.multi_line) {
      NewLine();
    } else {
      out_ += ' ';
    }
  }

  void EndAggregate(bool empty, char close) {
    if (!empty) {
      if (options_.multi_line) {
        NewLine();
      } else {
        out_ += ' ';
      }
    }
    out_ += close;
  }

  const reflection::Object& ObjectAt(int index) const {
    return *schema_.objects()->Get(index);
  }

  void PrintTableField(const Table* table, const reflection::Object& object,
                       const reflection::Field& field) {
    const reflection::Type& type = *field.type();
    switch (type.base_type()) {
      case reflection::String:
        PrintString(
            table->GetPointer<const flatbuffers::String*>(field.offset()));
        return;
      case reflection::Obj: {
        const reflection::Object& child = ObjectAt(type.index());
        if (child.is_struct()) {
          PrintStruct(table->GetStruct<const uint8_t*>(field.offset()), child);
        } else {
          PrintTable(table->GetPointer<const Table*>(field.offset()), child);
        }
        return;
      }
      case reflection::Union: {
        const std::string type_name = field.name()->str() + "_type";
        const reflection::Field* type_field =
            object.fields()->LookupByKey(type_name.c_str());
        const reflection::EnumVal* member =
            type_field == nullptr ? nullptr
                                  : schema_.enums()
                                        ->Get(type.index())
                                        ->values()
                                        ->LookupByKey(flatbuffers::GetAnyFieldI(
                                            *table, *type_field));
        if (member == nullptr || member->union_type() == nullptr) {
          out_ += "null";
          return;
        }
        PrintTable(table->GetPointer<const Table*>(field.offset()),
                   ObjectAt(member->union_type()->index()));
        return;
      }
      case reflection::Vector:
        PrintVector(table->GetPointer<const flatbuffers::Vector<uint8_t>*>(
                        field.offset()),
                    type);
        return;
      default:
        PrintScalar(type.base_type(), type.index(),
                    table->GetAddressOf(field.offset()));
        return;
    }
  }

  void PrintStruct(const uint8_t* data, const reflection::Object& object) {
    const std::vector<const reflection::Field*> fields = FieldsById(object);
    out_ += '{';
    ++depth_;
    bool first = true;
    for (const reflection::Field* field : fields) {
      StartMember(&first, *field);
      const reflection::Type& type = *field->type();
      const uint8_t* field_data = data + field->offset();
      if (type.base_type() == reflection::Obj) {
        PrintStruct(field_data, ObjectAt(type.index()));
      } else if (type.base_type() == reflection::Array) {
        const size_t element_size =
            type.element() == reflection::Obj
                ? static_cast<size_t>(ObjectAt(type.index()).bytesize())
                : flatbuffers::GetTypeSize(type.element());
        PrintElements(field_data, type.fixed_length(), element_size, type);
      } else {
        PrintScalar(type.base_type(), type.index(), field_data);
      }
    }
    --depth_;
    EndAggregate(first, '}');
  }

  // Prints inline elements (scalars or structs) laid out back to back.
  void PrintElements(const uint8_t* data, size_t count, size_t element_size,
                     const reflection::Type& type) {
    out_ += '[';
    ++depth_;
    bool first = true;
    for (size_t i = 0; i < count; ++i) {
      StartElement(&first);
      if (type.element() == reflection::Obj) {
        PrintStruct(data + i * element_size, ObjectAt(type.index()));
      } else {
        PrintScalar(type.element(), type.index(), data + i * element_size);
      }
    }
    --depth_;
    EndAggregate(first, ']');
  }

  void PrintVector(const flatbuffers::Vector<uint8_t>* vector,
                   const reflection::Type& type) {
    const size_t count = vector->size();
    if (count > options_.max_vector_size) {
      StrAppend(&out_, "[ ... ", count, " elements ... ]");
      return;
    }
    const reflection::BaseType element = type.element();
    if (element == reflection::String || element == reflection::Obj) {
      if (element == reflection::Obj && ObjectAt(type.index()).is_struct()) {
        PrintElements(vector->Data(), count, ObjectAt(type.index()).bytesize(),
                      type);
        return;
      }
      const auto* offsets = reinterpret_cast<
          const flatbuffers::Vector<flatbuffers::Offset<Table>>*>(vector);
      out_ += '[';
      ++depth_;
      bool first = true;
      for (size_t i = 0; i < count; ++i) {
        StartElement(&first);
        if (element == reflection::String) {
          PrintString(reinterpret_cast<const flatbuffers::Vector<
                          flatbuffers::Offset<flatbuffers::String>>*>(vector)
                          ->Get(i));
        } else {
          PrintTable(offsets->Get(i), ObjectAt(type.index()));
        }
      }
      --depth_;
      EndAggregate(first, ']');
      return;
    }
    if (element == reflection::Union) {
      // Vectors of unions need their companion type vector; print a marker
      // rather than guess.
      StrAppend(&out_, "[ ... ", count, " union elements ... ]");
      return;
    }
    PrintElements(vector->Data(), count, flatbuffers::GetTypeSize(element),
                  type);
  }

  void PrintString(const flatbuffers::String* string) {
    AppendString(string->string_view());
  }

  // `text` as a JSON string. Beyond what JSON requires (the quote, the
  // backslash, U+0000 to U+001F), DEL and the C1 controls U+0080 to U+009F
  // are escaped too: the same string to a JSON reader, but a terminal shown
  // the output (aos_dump) never sees a control character, whatever a
  // message, a field name or an enum name from a log holds.
  void AppendString(std::string_view text) {
    out_ += '"';
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      const unsigned char next =
          i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
      if (static_cast<unsigned char>(c) == 0xc2 && next >= 0x80 &&
          next <= 0x9f) {
        AppendUnicodeEscape(next);
        ++i;
        continue;
      }
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            AppendUnicodeEscape(static_cast<unsigned char>(c));
          } else {
            out_ += c;
          }
      }
    }
    out_ += '"';
  }

  void AppendUnicodeEscape(unsigned char code_point) {
    char escaped[8];
    snprintf(escaped, sizeof(escaped), "\\u%04x", code_point);
    out_ += escaped;
  }

  template <typename T>
  void PrintFloat(T value) {
    if (options_.strict_json && options_.non_finite_as_strings) {
      if (std::isnan(value)) {
        out_ += "\"nan\"";
        return;
      }
      if (std::isinf(value)) {
        out_ += value < 0 ? "\"-inf\"" : "\"inf\"";
        return;
      }
    }
    if (options_.strict_json && !std::isfinite(value)) {
      out_ += "null";
      return;
    }
    if (std::isnan(value)) {
      out_ += std::signbit(value) ? "-nan" : "nan";
      return;
    }
    if (std::isinf(value)) {
      out_ += value < 0 ? "-inf" : "inf";
      return;
    }
    char buffer[64];
    // Shortest text that reads back to exactly `value`.
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out_.append(buffer, result.ptr);
  }

  // Prints an integer that may be an enum value: by name when it is one
  // (or, for bit_flags enums, a combination of them), else as a number.
  void PrintInteger(int64_t value, int enum_index, bool is_unsigned_64,
                    uint64_t unsigned_value) {
    if (enum_index >= 0) {
      const reflection::Enum& enum_def = *schema_.enums()->Get(enum_index);
      const reflection::EnumVal* named = enum_def.values()->LookupByKey(value);
      if (named != nullptr) {
        AppendString(named->name()->string_view());
        return;
      }
      if (IsBitFlags(enum_def) && value != 0) {
        std::string names;
        uint64_t remaining = static_cast<uint64_t>(value);
        for (const reflection::EnumVal* flag : *enum_def.values()) {
          const uint64_t bits = static_cast<uint64_t>(flag->value());
          if (bits != 0 && (remaining & bits) == bits) {
            if (!names.empty()) names += ' ';
            names += flag->name()->str();
            remaining &= ~bits;
          }
        }
        if (remaining == 0) {
          AppendString(names);
          return;
        }
      }
    }
    if (is_unsigned_64) {
      StrAppend(&out_, unsigned_value);
    } else {
      StrAppend(&out_, value);
    }
  }

  static bool IsBitFlags(const reflection::Enum& enum_def) {
    return enum_def.attributes() != nullptr &&
           enum_def.attributes()->LookupByKey("bit_flags") != nullptr;
  }

  void PrintScalar(reflection::BaseType type, int enum_index,
                   const uint8_t* data) {
    switch (type) {
      case reflection::Bool:
        out_ += flatbuffers::ReadScalar<uint8_t>(data) != 0 ? "true" : "false";
        return;
      case reflection::Float:
        PrintFloat(flatbuffers::ReadScalar<float>(data));
        return;
      case reflection::Double:
        PrintFloat(flatbuffers::ReadScalar<double>(data));
        return;
      case reflection::ULong: {
        const uint64_t value = flatbuffers::ReadScalar<uint64_t>(data);
        PrintInteger(static_cast<int64_t>(value), enum_index, true, value);
        return;
      }
      default:
        PrintInteger(flatbuffers::GetAnyValueI(type, data), enum_index, false,
                     0);
        return;
    }
  }

  const reflection::Schema& schema_;
  const FlatbufferToJsonOptions& options_;
  std::string out_;
  int depth_ = 0;
};

}  // namespace

std::string TableFlatbufferToJson(const flatbuffers::Table* table,
                                  const reflection::Schema& schema,
                                  const reflection::Object& object,
                                  const FlatbufferToJsonOptions& options) {
  JsonPrinter printer(schema, options);
  printer.PrintTable(table, object);
  return printer.Finish();
}

std::string FlatbufferToJson(const uint8_t* buffer,
                             const reflection::Schema& schema,
                             const FlatbufferToJsonOptions& options) {
  CHECK(schema.root_table() != nullptr)
      << "FlatbufferToJson: the schema has no root_type; use "
         "TableFlatbufferToJson and name the table";
  return TableFlatbufferToJson(flatbuffers::GetAnyRoot(buffer), schema,
                               *schema.root_table(), options);
}

}  // namespace aos
