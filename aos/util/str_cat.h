#ifndef AOS_UTIL_STR_CAT_H_
#define AOS_UTIL_STR_CAT_H_

// String concatenation over std::string_view.
//
//   std::string message = aos::StrCat("channel ", name, ": max_size ", 1001);
//   aos::StrAppend(&message, " (", aos::StrJoin(nodes, ", "), ")");
//
// Why not absl::StrCat: Debian builds abseil with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), which std::string_view does not
// convert to. These take anything convertible to std::string_view, other
// string views (anything with char data() and size(), absl::string_view
// included), chars, integers and floating point (shortest text that reads
// back exactly).
// They allocate; not for realtime code.

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

namespace aos {
namespace str_cat_internal {

template <typename T>
void AppendPiece(std::string* out, const T& piece) {
  if constexpr (std::is_same_v<T, char>) {
    out->push_back(piece);
  } else if constexpr (std::is_same_v<T, bool>) {
    out->append(piece ? "true" : "false");
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out->append(std::string_view(piece));
  } else if constexpr (requires {
                         { piece.data() } -> std::convertible_to<const char*>;
                         { piece.size() } -> std::convertible_to<size_t>;
                       }) {
    // Other string views, e.g. Debian's absl::string_view (Status messages).
    out->append(piece.data(), piece.size());
  } else if constexpr (std::is_arithmetic_v<T>) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), piece);
    out->append(buffer, result.ptr);
  } else if constexpr (std::is_enum_v<T>) {
    AppendPiece(out, static_cast<std::underlying_type_t<T>>(piece));
  } else {
    static_assert(sizeof(T) == 0, "aos::StrCat: unsupported argument type");
  }
}

}  // namespace str_cat_internal

// Appends each argument's text to *out.
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (str_cat_internal::AppendPiece(out, args), ...);
}

// The arguments' text, concatenated.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  StrAppend(&out, args...);
  return out;
}

// The elements of `range` (each accepted by StrCat), separated by
// `separator`.
template <typename Range>
std::string StrJoin(const Range& range, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& element : range) {
    if (!first) out.append(separator);
    first = false;
    str_cat_internal::AppendPiece(&out, element);
  }
  return out;
}

}  // namespace aos

#endif  // AOS_UTIL_STR_CAT_H_
