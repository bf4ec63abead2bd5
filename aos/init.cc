#include "aos/init.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
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

// The event loop's own flags: every program that links a loop has them,
// though few matter to a tool.
bool IsEventLoopFlag(const gflags::CommandLineFlagInfo& flag) {
  // Every program reading a system's shared memory needs to say which.
  if (flag.name == "shm_base") return false;
  return flag.filename == "aos/events/event_loop.cc" ||
         flag.filename == "aos/events/shm_event_loop.cc" ||
         flag.filename == "aos/tracing/ring_flags.cc";  // The flight recorder.
}

// Whether `flag` is defined in `program`'s own source file (aos_dump.cc,
// message_bridge_main.cc).
bool IsProgramsOwn(const gflags::CommandLineFlagInfo& flag,
                   std::string_view program) {
  std::string_view stem = flag.filename;
  stem.remove_prefix(std::min(stem.size(), stem.rfind('/') + 1));
  stem = stem.substr(0, stem.rfind('.'));
  if (stem.ends_with("_main")) stem.remove_suffix(5);
  return !program.empty() && stem == program;
}

void PrintFlag(const gflags::CommandLineFlagInfo& flag, std::ostream* out) {
  *out << "  --" << flag.name << " (" << flag.type << ", default: "
       << (flag.type == "string" ? "\"" + flag.default_value + "\""
                                 : flag.default_value)
       << ")\n      " << flag.description << "\n";
}

}  // namespace

std::string HelpText(std::string_view usage, std::string_view program) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<const gflags::CommandLineFlagInfo*> own, shared, event_loop;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!IsOurs(flag.filename)) continue;
    if (IsProgramsOwn(flag, program)) {
      own.push_back(&flag);
    } else if (IsEventLoopFlag(flag)) {
      event_loop.push_back(&flag);
    } else {
      shared.push_back(&flag);
    }
  }
  std::ostringstream out;
  out << usage << "\n";
  auto section = [&](std::string_view heading,
                     const std::vector<const gflags::CommandLineFlagInfo*>&
                         section_flags) {
    if (section_flags.empty()) return;
    out << "\n" << heading << ":\n";
    for (const gflags::CommandLineFlagInfo* flag : section_flags) {
      PrintFlag(*flag, &out);
    }
  };
  section("Flags of " + std::string(program), own);
  section(own.empty() ? "Flags" : "Flags shared with other aos programs",
          shared);
  section("Event loop flags (docs/event_loop.md)", event_loop);
  out << "\n  --helpfull\n      Also list the flags of glog and gflags.\n";
  return out.str();
}

namespace {

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
    std::cout << HelpText(usage, gflags::ProgramInvocationShortName());
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

}  // namespace aos
