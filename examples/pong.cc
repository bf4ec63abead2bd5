// pong: the second half of the reference benchmark. A watcher on
// aos.examples.Ping answers each one on /test with an aos.examples.Pong
// carrying its value and send time.
#include <iostream>

#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"
#include "examples/pingpong_flags.h"
#include "examples/pong_generated.h"

namespace aos::examples {
namespace {

int Main() {
  auto config = ReadPingPongConfig();
  ShmEventLoop loop(&config.message(), "pong",
                    ReadPingPongNode(config.message()));
  ApplyRealtimeFlags(&loop);
  Sender<Pong> sender = loop.MakeSender<Pong>("/test");
  int64_t answered = 0;
  int64_t not_sent = 0;
  loop.MakeWatcher("/test", [&](const Ping& ping) {
    auto builder = sender.MakeBuilder();
    Pong::Builder pong = builder.MakeBuilder<Pong>();
    pong.add_value(ping.value());
    pong.add_initial_send_time(ping.send_time());
    // A failed send is counted (and in pong's timing reports, error_counts);
    // it is not logged, since logging allocates (--die_on_malloc).
    if (builder.Send(pong.Finish()) == RawSender::Error::kOk) {
      ++answered;
    } else {
      ++not_sent;
    }
  });
  loop.Run();
  // Quiet when all went well; otherwise one line saying where it looked.
  if (answered + not_sent == 0) {
    std::cerr << "pong: no ping arrived: is ping running on --shm_base="
              << FLAGS_shm_base
              << (loop.node() != nullptr ? " (and both message bridges)" : "")
              << "?\n";
  } else if (not_sent > 0) {
    std::cerr << "pong: " << answered << " pings answered, " << not_sent
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
