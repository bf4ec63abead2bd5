// The last resort InitGoogle installs: an exception that escapes main is one
// line naming the program and the error, with exit status 1.
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "aos/init.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

// Lets `error` escape a thread, which ends in std::terminate with the
// exception current, as an exception escaping main does (gtest would catch
// one thrown in the test's own thread).
template <typename Error>
void InitThenThrow(Error error) {
  InstallUncaughtExceptionHandler();
  std::thread([&error] { throw error; }).join();
}

TEST(InitTerminateTest, AnEscapedExceptionIsOneLineAndExitOne) {
  EXPECT_EXIT(InitThenThrow(std::runtime_error("disk on fire")),
              ::testing::ExitedWithCode(1),
              "^[^\n]*: unexpected error: disk on fire\n$");
}

TEST(InitTerminateTest, AFilesystemErrorNamesThePath) {
  EXPECT_EXIT(
      InitThenThrow(std::filesystem::filesystem_error(
          "status", "/no/such/path",
          std::make_error_code(std::errc::too_many_symbolic_link_levels))),
      ::testing::ExitedWithCode(1), "unexpected error: .*/no/such/path");
}

[[noreturn]] void InitThenTerminate() {
  InstallUncaughtExceptionHandler();
  std::terminate();
}

TEST(InitTerminateTest, TerminateWithoutAnExceptionStillAborts) {
  EXPECT_EXIT(InitThenTerminate(), ::testing::KilledBySignal(SIGABRT), "");
}

}  // namespace
}  // namespace aos
