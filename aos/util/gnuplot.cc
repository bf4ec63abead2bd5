#include "aos/util/gnuplot.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"

namespace aos {

std::string GnuplotQuoted(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    quoted += c == '\'' ? '"' : (byte < 0x20 || byte == 0x7f) ? '?' : c;
  }
  return quoted + "'";
}

absl::Status RunGnuplotScript(std::string_view script,
                              const std::string& png_path) {
  if (access("/usr/bin/gnuplot", X_OK) != 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot draw ", png_path,
               ": gnuplot is not installed (Debian package gnuplot-nox; "
               "tools/aos.sh install installs it)"));
  }
  char directory[] = "/tmp/aos_plot_XXXXXX";
  if (mkdtemp(directory) == nullptr) {
    return absl::InternalError(StrCat("cannot make a directory for ", png_path,
                                      ": ", strerror(errno)));
  }
  const std::string script_path = StrCat(directory, "/plot.gp");
  std::ofstream(script_path) << script;
  absl::Status status = absl::OkStatus();
  {
    Subprocess gnuplot("/usr/bin/gnuplot", {script_path}, directory);
    if (gnuplot.Wait() != 0) {
      status = absl::InternalError(
          StrCat("gnuplot could not draw ", png_path, ": ", gnuplot.Stderr()));
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  return status;
}

}  // namespace aos
