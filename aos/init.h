#ifndef AOS_INIT_H_
#define AOS_INIT_H_

// Start-up for every aos program.
//
//   int main(int argc, char **argv) {
//     aos::InitGoogle(&argc, &argv, "Usage: ping [--sleep_ms=N]\n...");
//     ...
//   }

#include <string>
#include <string_view>

namespace aos {

// Parses gflags (removing them from argc/argv) and starts glog logging to
// stderr. `--help` (or `-h`) prints HelpText(usage, the program's name),
// then exits 0; `--helpfull` lists every flag, glog's and gflags' included.
// An unknown flag prints gflags' error naming it and exits 1. Call once,
// first thing in main().
//
// It also calls InstallUncaughtExceptionHandler().
void InitGoogle(int* argc, char*** argv, std::string_view usage);

// What `--help` prints: `usage`, then only the flags defined in aos's own
// sources (aos/, examples/, tools/), in three groups so that a program's
// own come first: "Flags of PROGRAM" (defined in PROGRAM.cc or
// PROGRAM_main.cc), then those it shares with other aos programs
// (--config, --node, --shm_base, ...), then the event loop's (--timing_reports,
// --die_on_malloc, ...: every program that links a loop has them, though a
// tool seldom needs them). Empty groups are left out.
std::string HelpText(std::string_view usage, std::string_view program);

// Installs the last resort for exceptions: one that escapes main()
// (or a thread) prints "<program>: unexpected error: <what()>" on one line
// and exits 1, so a user never sees "terminate called after throwing".
// Tools still turn the errors they expect into their own messages; CHECK
// and LOG(FATAL) failures, and std::terminate for any other reason, abort
// with their message as before. InitGoogle calls it; call it directly only
// where InitGoogle cannot run (a test, whose main has set up logging).
void InstallUncaughtExceptionHandler();

}  // namespace aos

#endif  // AOS_INIT_H_
