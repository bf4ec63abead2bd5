#ifndef AOS_UTIL_EXIT_CODE_H_
#define AOS_UTIL_EXIT_CODE_H_

// How a child process ended, as one int and as words.
//
//   waitpid(pid, &wait_status, 0);
//   const int code = aos::ExitCodeOf(wait_status);   // 3, or -9
//   std::cerr << name << " " << aos::DescribeExit(code) << "\n";

#include <sys/wait.h>

#include <cstring>
#include <string>

#include "aos/util/str_cat.h"

namespace aos {

// The exit code of a process waitpid() reported `wait_status` for, or -N
// if signal N ended it.
inline int ExitCodeOf(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                : -WTERMSIG(wait_status);
}

// An ExitCodeOf() in words: "exited with status 3", "killed by signal 9
// (Killed)".
inline std::string DescribeExit(int exit_code) {
  if (exit_code >= 0) return StrCat("exited with status ", exit_code);
  return StrCat("killed by signal ", -exit_code, " (", strsignal(-exit_code),
                ")");
}

}  // namespace aos

#endif  // AOS_UTIL_EXIT_CODE_H_
