#ifndef AOS_UTIL_FLAG_CHECKS_H_
#define AOS_UTIL_FLAG_CHECKS_H_

// Checks of command-line flag values, in one shape for every program: a
// value that does not fit is one line that names the flag and its value and
// says what to give instead, and the program exits 1 (user_error.h). Each
// check returns that line as an InvalidArgument status, so that a program's
// options can be validated (and tested) apart from exiting:
//
//   ExitOnFlagError(CheckNotNegative("--count", FLAGS_count));
//   // "ping: --count=-1 is negative: give 0 or more"
//   ExitOnFlagError(CheckOneOf("--format", FLAGS_format, {"table", "csv"}));
//   // "aos_timing_report_streamer: --format=x is not one of table, csv"
//   ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99));
//   // "netdelay: --priority=100 is not 0-99"
//
// A check whose default wording does not say enough takes the rest of the
// line as `problem` (it follows "--flag=VALUE"), e.g.
// " is not a SCHED_FIFO priority: give 1-99, or 0 for normal scheduling".
// NaN fails every numeric check. None of them allocates unless it fails,
// except CheckWritableFile.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos {

// "--flag=VALUE": a string value is shown printable on one line (cut when
// long), a number as StrCat writes it.
std::string FlagWithValue(std::string_view flag, std::string_view value);
template <typename T>
requires std::is_arithmetic_v<T> std::string FlagWithValue(
    std::string_view flag, T value) {
  return StrCat(flag, "=", value);
}

// An InvalidArgument status "--flag=VALUE" + `problem`, the one shape all the
// checks below return.
template <typename T>
absl::Status FlagError(std::string_view flag, const T& value,
                       std::string_view problem) {
  return absl::InvalidArgumentError(
      StrCat(FlagWithValue(flag, value), problem));
}

// OK if `value` >= 0; else "--flag=VALUE is negative: give 0 or more"
// (or `problem` in place of " is negative: ...").
template <typename T>
requires std::is_arithmetic_v<T> absl::Status CheckNotNegative(
    std::string_view flag, T value, std::string_view problem = {}) {
  if (value >= 0) return absl::OkStatus();
  return FlagError(flag, value,
                   problem.empty() ? " is negative: give 0 or more" : problem);
}

// OK if `min` <= `value` <= `max`; else "--flag=VALUE is not MIN-MAX" (or
// `problem` in its place). An infinite value fails against a finite bound.
template <typename T>
requires std::is_arithmetic_v<T> absl::Status CheckInRange(
    std::string_view flag, T value, T min, T max,
    std::string_view problem = {}) {
  if (value >= min && value <= max) return absl::OkStatus();
  if (!problem.empty()) return FlagError(flag, value, problem);
  return FlagError(flag, value, StrCat(" is not ", min, "-", max));
}

// OK if `value` >= `min`; else "--flag=VALUE is not MIN or more" (or
// `problem` in its place).
template <typename T>
requires std::is_arithmetic_v<T> absl::Status CheckAtLeast(
    std::string_view flag, T value, T min, std::string_view problem = {}) {
  if (value >= min) return absl::OkStatus();
  if (!problem.empty()) return FlagError(flag, value, problem);
  return FlagError(flag, value, StrCat(" is not ", min, " or more"));
}

// OK if `value` is one of `choices`; else
// "--flag=VALUE is not one of A, B, C".
absl::Status CheckOneOf(std::string_view flag, std::string_view value,
                        std::initializer_list<std::string_view> choices);

// OK if `path` is empty (the output is off) or can be opened for writing
// now: it is created if missing (and left in place, empty), never
// truncated, so that a long run does not end in a path it cannot write.
// Else "cannot write --flag=PATH: <reason>".
absl::Status CheckWritableFile(std::string_view flag, const std::string& path);

// Ends the program if `status` is not OK: its message as one line and exit
// status 1 (ExitForUserError). Does nothing for OK.
void ExitOnFlagError(const absl::Status& status);

}  // namespace aos

#endif  // AOS_UTIL_FLAG_CHECKS_H_
