// pong: the second half of the reference benchmark. A watcher on
// aos.examples.Ping answers each one on /test with an aos.examples.Pong
// carrying its value and send time.
#include <iostream>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/cpu_set.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"

DEFINE_string(config, "",
              "The configuration; default: pingpong_config.json next to the "
              "binary, then in the working directory.");
DEFINE_int32(priority, 5, "SCHED_FIFO priority (0 = normal scheduling).");
DEFINE_string(affinity, "", "CPUs to run on, e.g. 1 or 0,2-3 (default: any).");

namespace aos::examples {
namespace {

int Main() {
  auto config = ReadConfigFlag(FLAGS_config, "pingpong_config.json");
  if (!config.ok()) {
    std::cerr << "pong: " << config.status().message() << "\n";
    return 1;
  }
  ShmEventLoop loop(&config->message(), "pong");
  loop.SetVersionString("pong_version");
  loop.SetRuntimeRealtimePriority(FLAGS_priority);
  if (!FLAGS_affinity.empty()) {
    auto cpus = ParseCpuList(FLAGS_affinity);
    if (!cpus.ok()) {
      std::cerr << "pong: --affinity=" << FLAGS_affinity << ": "
                << cpus.status().message() << "\n";
      return 1;
    }
    loop.SetRuntimeAffinity(*cpus);
  }
  Sender<Pong> sender = loop.MakeSender<Pong>("/test");
  loop.MakeWatcher("/test", [&](const Ping& ping) {
    auto builder = sender.MakeBuilder();
    Pong::Builder pong = builder.MakeBuilder<Pong>();
    pong.add_value(ping.value());
    pong.add_initial_send_time(ping.send_time());
    const RawSender::Error error = builder.Send(pong.Finish());
    if (error != RawSender::Error::kOk) {
      LOG_EVERY_N(WARNING, 100)
          << "answering ping " << ping.value() << ": " << error;
    }
  });
  loop.Run();
  return 0;
}

}  // namespace
}  // namespace aos::examples

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: pong [--config=FILE] [--priority=N]\n"
      "Answers every /test aos.examples.Ping with a Pong; stop with\n"
      "Ctrl-C or SIGTERM. docs/pingpong.md.");
  return aos::examples::Main();
}
