#include "aos/util/flag_output_file.h"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <utility>

#include "glog/logging.h"

namespace aos {

FlagOutputFile::FlagOutputFile(std::string_view program, std::string_view flag,
                               std::string path)
    : program_(program), flag_(flag), path_(std::move(path)) {
  if (path_.empty()) return;
  file_.open(path_);
  if (!file_) {
    std::cerr << program_ << ": --" << flag_ << "=" << path_
              << ": cannot open for writing: " << std::strerror(errno) << "\n";
    ok_ = false;
  }
}

bool FlagOutputFile::WriteAndClose(std::string_view text) {
  CHECK(enabled() && ok_ && file_.is_open())
      << "FlagOutputFile::WriteAndClose for --" << flag_
      << ": call it once, on a file given and opened";
  file_ << text << "\n";
  file_.close();
  if (!file_) {
    std::cerr << program_ << ": --" << flag_ << "=" << path_
              << ": writing failed\n";
    return false;
  }
  return true;
}

}  // namespace aos
