// An application for launcher_test: an event loop named --name that sends
// timing reports, or misbehaves as --behaviour says.

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "gflags/gflags.h"

DEFINE_string(name, "app", "The event loop's name.");
DEFINE_string(write_args, "",
              "Write every argument it was given (argv[1] on, before flags "
              "are parsed) to this file, one per line, and go on.");
DEFINE_string(on_stop_append, "",
              "Once stopped, append its --name as a line to this file.");
DEFINE_string(behaviour, "run",
              "run: report until stopped; exit3: exit with status 3 at once, "
              "saying why; deaf: report, and ignore SIGTERM; silent: run, and "
              "send no timing report; hog: touch 1 GiB of memory, 16 MiB at a "
              "time, then run.");

int main(int argc, char** argv) {
  const std::vector<std::string> given(argv + 1, argv + argc);
  aos::InitGoogle(&argc, &argv, "Usage: launcher_test_app --config=FILE");
  if (!FLAGS_write_args.empty()) {
    std::ofstream out(FLAGS_write_args);
    for (const std::string& arg : given) out << arg << "\n";
  }
  if (FLAGS_behaviour == "exit3") {
    fprintf(stderr, "launcher_test_app: told to fail\n");
    return 3;
  }
  absl::StatusOr<aos::FlatbufferDetachedBuffer<aos::Configuration>> config =
      aos::ReadConfigFlag("aos/testing/test_config.json");
  if (!config.ok()) {
    fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  if (FLAGS_behaviour == "hog") {
    std::vector<std::unique_ptr<char[]>> held;
    for (int i = 0; i < 64; ++i) {
      held.push_back(std::make_unique<char[]>(16 << 20));
      memset(held.back().get(), 1, 16 << 20);
    }
    fprintf(stderr, "launcher_test_app: holding 1 GiB\n");
    while (true) pause();
  }
  if (FLAGS_behaviour == "silent") {
    while (true) pause();
  }
  aos::ShmEventLoop loop(&config->message(), FLAGS_name);
  if (FLAGS_behaviour == "deaf") {
    // The loop's stop signals are blocked and read from a signalfd: a
    // handler that ignores them instead.
    loop.OnRun([]() {
      sigset_t term;
      sigemptyset(&term);
      sigaddset(&term, SIGTERM);
      sigaddset(&term, SIGINT);
      pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
      signal(SIGTERM, SIG_IGN);
    });
  }
  loop.Run();
  if (!FLAGS_on_stop_append.empty()) {
    std::ofstream(FLAGS_on_stop_append, std::ios::app) << FLAGS_name << "\n";
  }
  return 0;
}
