// pong: the second half of the reference benchmark, PongApplication
// (pong_application.h) on shared memory.
#include <iostream>

#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "examples/pingpong_flags.h"
#include "examples/pong_application.h"

namespace aos::examples {
namespace {

int Main() {
  auto config = ReadPingPongConfig();
  // As AOS names a loop: --application_name, else the program's role.
  ShmEventLoop loop(
      &config.message(),
      FLAGS_application_name.empty() ? "pong" : FLAGS_application_name,
      ReadPingPongNode(config.message()));
  ApplyRealtimeFlags(&loop);
  PongApplication pong(&loop);
  loop.Run();
  // Quiet when all went well; otherwise one line saying where it looked.
  if (pong.answered() + pong.not_sent() == 0) {
    std::cerr << "pong: no ping arrived: is ping running on --shm_base="
              << FLAGS_shm_base
              << (loop.node() != nullptr ? " (and both message bridges)" : "")
              << "?\n";
  } else if (pong.not_sent() > 0) {
    std::cerr << "pong: " << pong.answered() << " pings answered, "
              << pong.not_sent()
              << " answers not sent (kMessagesSentTooFast or a damaged "
                 "queue: see its timing reports)\n";
  }
  return 0;
}

}  // namespace
}  // namespace aos::examples

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: pong [--config=FILE] [--node=NAME] [--priority=N]\n"
      "Answers every /test aos.examples.Ping with a Pong; stop with\n"
      "Ctrl-C or SIGTERM. --config defaults to pingpong_config.json\n"
      "(examples/pingpong.json). docs/pingpong.md.");
  aos::RefuseArguments(argc, argv);
  return aos::examples::Main();
}
