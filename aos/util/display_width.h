#ifndef AOS_UTIL_DISPLAY_WIDTH_H_
#define AOS_UTIL_DISPLAY_WIDTH_H_

// How many terminal columns UTF-8 text takes, and text cut to fit a width,
// for tables that hold our own symbols ("→", "±") beside ASCII.
//
//   DisplayWidth("a → b");                    // 5, though it is 7 bytes
//   FitDisplayWidth("abcdefghij", 7);         // "ab...ij"
//
// One column per code point: right for ASCII and the symbols we print, not
// for wide (CJK) or combining characters, which names never reach a
// terminal as (aos::Printable escapes every non-ASCII byte of them).

#include <cstddef>
#include <string>
#include <string_view>

namespace aos {

// Code points in `text`: its bytes that do not continue a UTF-8 sequence.
inline size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++width;
  }
  return width;
}

// `text` itself if it fits in `width` columns (or `width` is under 5),
// else its start and end around "...", `width` columns in all, cut
// between code points.
inline std::string FitDisplayWidth(std::string_view text, size_t width) {
  const size_t total = DisplayWidth(text);
  if (total <= width || width < 5) return std::string(text);
  const size_t keep = width - 3;
  const size_t head = keep - keep / 2;
  const size_t tail = keep / 2;
  // The byte offset where code point `n` starts.
  auto offset = [&](size_t n) {
    size_t seen = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;
      if (seen++ == n) return i;
    }
    return text.size();
  };
  return std::string(text.substr(0, offset(head))) + "..." +
         std::string(text.substr(offset(total - tail)));
}

}  // namespace aos

#endif  // AOS_UTIL_DISPLAY_WIDTH_H_
