#include "aos/util/user_error.h"

#include <errno.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace aos {

void ExitForUserError(std::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] != '\n') {
      line += message[i];
      continue;
    }
    // "a\n  b" reads as "a; b", and "a:\n  b" as "a: b".
    while (i + 1 < message.size() && message[i + 1] == ' ') ++i;
    if (i + 1 < message.size()) line += line.ends_with(':') ? " " : "; ";
  }
  std::cout.flush();
  std::cerr << program_invocation_short_name << ": " << line << std::endl;
  exit(1);
}

void RefuseArguments(int argc, char** argv) {
  if (argc <= 1) return;
  ExitForUserError(std::string("unexpected argument '") + argv[1] +
                   "'; every option is a --flag (see --help)");
}

}  // namespace aos
