#include "aos/util/printable.h"

#include <cstdio>

namespace aos {
namespace {

void AppendEscaped(std::string_view text, std::string* out) {
  for (const char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        *out += "\\\\";
        continue;
      case '"':
        *out += "\\\"";
        continue;
      case '\n':
        *out += "\\n";
        continue;
      case '\t':
        *out += "\\t";
        continue;
      case '\r':
        *out += "\\r";
        continue;
      default:
        break;
    }
    if (byte >= 0x20 && byte <= 0x7e) {
      out->push_back(c);
    } else {
      char escaped[5];
      snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      *out += escaped;
    }
  }
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out = "\"";
  if (text.size() <= max_bytes) {
    AppendEscaped(text, &out);
    out += '"';
    return out;
  }
  const size_t half = max_bytes / 2;
  AppendEscaped(text.substr(0, half), &out);
  out += "...";
  AppendEscaped(text.substr(text.size() - half), &out);
  out += "\" (";
  out += std::to_string(text.size());
  out += " bytes)";
  return out;
}

std::string InlinePrintable(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return Printable(text, max_bytes);
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) return Printable(text, max_bytes);
  }
  return std::string(text);
}

}  // namespace aos
