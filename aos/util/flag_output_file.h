#ifndef AOS_UTIL_FLAG_OUTPUT_FILE_H_
#define AOS_UTIL_FLAG_OUTPUT_FILE_H_

// A file that a command-line flag names and a program writes its results
// to when it is done (ping's --summary_json, a benchmark's --json). It is
// opened when the program starts, so that a path it cannot write ends the
// program at once, in one line that names the flag (user_error.h), not
// after the work is done.
//
// ```
//   FlagOutputFile summary("--summary_json", FLAGS_summary_json);
//   ...
//   if (summary.enabled()) summary.WriteAndClose(json.Text());
// ```

#include <fstream>
#include <string>
#include <string_view>

namespace aos {

class FlagOutputFile {
 public:
  // Opens (creates or truncates) `path`, the value of `flag`, unless it is
  // empty. When it cannot, ends the program with ExitForUserError:
  // "<program>: --flag=<path>: cannot open for writing: <reason>".
  FlagOutputFile(std::string_view flag, std::string path);

  // Whether a path was given.
  bool enabled() const { return !path_.empty(); }

  // Writes `text` and a newline, and closes the file; a failed write ends
  // the program like a failed open ("...: writing failed"). Calling it
  // without a path, or twice, is a programming error and aborts.
  void WriteAndClose(std::string_view text);

 private:
  std::string flag_;
  std::string path_;
  std::ofstream file_;
};

}  // namespace aos

#endif  // AOS_UTIL_FLAG_OUTPUT_FILE_H_
