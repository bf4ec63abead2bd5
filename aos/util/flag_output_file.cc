#include "aos/util/flag_output_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "glog/logging.h"

namespace aos {

FlagOutputFile::FlagOutputFile(std::string_view flag, std::string path)
    : flag_(flag), path_(std::move(path)) {
  if (path_.empty()) return;
  file_.open(path_);
  if (!file_) {
    ExitForUserError(StrCat(flag_, "=", path_, ": cannot open for writing: ",
                            std::strerror(errno)));
  }
}

void FlagOutputFile::WriteAndClose(std::string_view text) {
  CHECK(file_.is_open()) << "FlagOutputFile::WriteAndClose for " << flag_
                         << ": call it once, on a file given and opened";
  file_ << text << "\n";
  file_.close();
  if (!file_) ExitForUserError(StrCat(flag_, "=", path_, ": writing failed"));
}

}  // namespace aos
