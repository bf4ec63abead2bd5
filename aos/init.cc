#include "aos/init.h"

#include <errno.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "gflags/gflags.h"
#include "glog/logging.h"

namespace aos {
namespace {

char kHelpFlag[] = "--help";

bool IsOurs(const std::string& filename) {
  for (const char* prefix : {"aos/", "examples/", "tools/"}) {
    if (filename.starts_with(prefix)) return true;
  }
  return false;
}

void PrintHelp(std::string_view usage) {
  std::cout << usage << "\n\nFlags:\n";
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!IsOurs(flag.filename)) continue;
    std::cout << "  --" << flag.name << " (" << flag.type << ", default: "
              << (flag.type == "string" ? "\"" + flag.default_value + "\""
                                        : flag.default_value)
              << ")\n      " << flag.description << "\n";
  }
  std::cout << "  --helpfull\n      Also list the flags of glog and gflags.\n";
}

// The last resort for an exception nothing caught: one line naming the
// program and the error, exit status 1. Anything else that ends in
// std::terminate (a noexcept violation, a joinable thread destroyed) is a
// bug: abort as before, so it leaves a core.
[[noreturn]] void TerminateOnUncaughtException() {
  const std::exception_ptr exception = std::current_exception();
  if (exception == nullptr) std::abort();
  std::string what;
  try {
    std::rethrow_exception(exception);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  std::cout.flush();
  std::cerr << program_invocation_short_name << ": unexpected error: " << what
            << std::endl;
  // Not exit(): other threads may still run, and static destructors with
  // them.
  std::_Exit(1);
}

}  // namespace

void InstallUncaughtExceptionHandler() {
  std::set_terminate(TerminateOnUncaughtException);
}

void InitGoogle(int* argc, char*** argv, std::string_view usage) {
  InstallUncaughtExceptionHandler();
  // -h is what people type first; gflags would call it an unknown flag.
  for (int i = 1; i < *argc; ++i) {
    if (std::string_view((*argv)[i]) == "-h") (*argv)[i] = kHelpFlag;
  }
  gflags::SetUsageMessage(std::string(usage));
  gflags::ParseCommandLineNonHelpFlags(argc, argv, true);
  std::string help;
  if (gflags::GetCommandLineOption("help", &help) && help == "true") {
    PrintHelp(usage);
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

}  // namespace aos
