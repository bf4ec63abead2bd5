#ifndef AOS_UTIL_USER_ERROR_H_
#define AOS_UTIL_USER_ERROR_H_

// Ending a program because of what its user gave it: a flag, a config, a
// path, a permission. Such a problem is one line naming the culprit and
// exit status 1, never a stack trace; CHECK and LOG(FATAL) are for our own
// bugs.
//
//   if (!config.ok()) aos::ExitForUserError(config.status().message());
//   // stderr: "ping: --config: /tmp/x.json: no such file"

#include <string_view>

namespace aos {

// Prints "<program>: <message>" on stderr as one line (line breaks in
// `message` become "; ", or a space after a colon) and exits with status 1.
[[noreturn]] void ExitForUserError(std::string_view message);

// For programs that take only flags: ends the program as above if any
// argument is left after flag parsing (argv[1] on).
void RefuseArguments(int argc, char** argv);

}  // namespace aos

#endif  // AOS_UTIL_USER_ERROR_H_
