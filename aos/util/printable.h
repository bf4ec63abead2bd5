#ifndef AOS_UTIL_PRINTABLE_H_
#define AOS_UTIL_PRINTABLE_H_

// Text that came from outside the program (a file, a queue, a network peer,
// a flag) made safe to put into an error line or onto a terminal.
//
//   LOG(ERROR) << "unknown compression " << aos::Printable(name);
//   // unknown compression "zst\x00\x1b[2J" ... or, for a long one,
//   // "aaaa…aaaa" (1048576 bytes)
//
// Such text may hold NULs, escape sequences that move the cursor or change
// the terminal's title, line breaks that forge log lines, or megabytes.
// Printable() escapes every byte that is not printable ASCII and keeps at
// most a bounded number of bytes of it, saying how long it really was.

#include <cstddef>
#include <string>
#include <string_view>

namespace aos {

// How many bytes of the original Printable() keeps by default: the start and
// the end, half each.
inline constexpr size_t kPrintableMaxBytes = 120;
// The bound for a path, which is often longer than a name (a build's
// sandbox, a temporary directory) and still worth showing whole.
inline constexpr size_t kPrintablePathMaxBytes = 512;

// `text` between double quotes, with backslash, the double quote and every
// byte outside 0x20-0x7e escaped (\\, \", \n, \t, \r, else \xNN). When
// `text` is longer than `max_bytes`, only its first and last max_bytes / 2
// bytes are kept, joined by "...", and " (N bytes)" follows the closing
// quote. The result is at most about 4 * max_bytes + 30 characters, however
// long `text` is. Allocates; not for realtime paths.
std::string Printable(std::string_view text,
                      size_t max_bytes = kPrintableMaxBytes);

// For a culprit inside a sentence (a path, a name, a flag's value): `text`
// itself when it is at most `max_bytes` bytes of printable ASCII (0x20-0x7e),
// so that ordinary messages read as they always did; otherwise
// Printable(text, max_bytes): quoted, escaped, and elided with its length
// said. Allocates; not for realtime paths.
std::string InlinePrintable(std::string_view text,
                            size_t max_bytes = kPrintableMaxBytes);

}  // namespace aos

#endif  // AOS_UTIL_PRINTABLE_H_
