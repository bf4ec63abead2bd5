#ifndef AOS_UTIL_FLAG_OUTPUT_FILE_H_
#define AOS_UTIL_FLAG_OUTPUT_FILE_H_

// A file that a command-line flag names and a program writes its results
// to when it is done (ping's --summary_json, a benchmark's --json). It is
// opened when the program starts, so that a path it cannot write fails at
// once, in one line that names the flag, not after the work is done.
//
// ```
//   FlagOutputFile summary("ping", "summary_json", FLAGS_summary_json);
//   if (!summary.ok()) return 1;   // the line is already on stderr
//   ...
//   if (summary.enabled() && !summary.WriteAndClose(json.Text())) return 1;
// ```

#include <fstream>
#include <string>
#include <string_view>

namespace aos {

class FlagOutputFile {
 public:
  // Opens (creates or truncates) `path` unless it is empty. When it cannot,
  // prints "<program>: --<flag>=<path>: cannot open for writing: <reason>"
  // to stderr, and ok() is false.
  FlagOutputFile(std::string_view program, std::string_view flag,
                 std::string path);

  // False if the file could not be opened.
  bool ok() const { return ok_; }
  // Whether a path was given.
  bool enabled() const { return !path_.empty(); }

  // Writes `text` and a newline, and closes the file. On failure prints
  // "<program>: --<flag>=<path>: writing failed" and returns false. Call it
  // once, on an enabled file that is ok().
  bool WriteAndClose(std::string_view text);

 private:
  std::string program_;
  std::string flag_;
  std::string path_;
  std::ofstream file_;
  bool ok_ = true;
};

}  // namespace aos

#endif  // AOS_UTIL_FLAG_OUTPUT_FILE_H_
