#ifndef AOS_UTIL_GNUPLOT_H_
#define AOS_UTIL_GNUPLOT_H_

// What our PNGs share: gnuplot (Debian's gnuplot-nox) run as a child
// process on a script, strings made safe for its scripts, one palette.
//
//   std::string script = StrCat("set output ", GnuplotQuoted(png), "\n", ...);
//   absl::Status status = RunGnuplotScript(script, png);
//
// Not for realtime code.

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace aos {

// Ten colours that tell apart, "#rrggbb", for curves or processes in order.
inline constexpr std::string_view kPlotColors[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// `text` in single quotes for a gnuplot script. A quote in it would end the
// string, and a line break would end the command and start another (gnuplot
// runs shell commands with system()): a quote becomes '"', control
// characters '?'.
std::string GnuplotQuoted(std::string_view text);

// Runs gnuplot on `script`, which writes `png_path`, from a temporary
// directory removed after. An error names `png_path` and why: gnuplot not
// installed, or gnuplot's own message.
absl::Status RunGnuplotScript(std::string_view script,
                              const std::string& png_path);

}  // namespace aos

#endif  // AOS_UTIL_GNUPLOT_H_
