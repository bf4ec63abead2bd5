#include "examples/pong_application.h"

#include "examples/ping_generated.h"

namespace aos::examples {

PongApplication::PongApplication(EventLoop* event_loop)
    : sender_(event_loop->MakeSender<Pong>("/test")) {
  event_loop->MakeWatcher("/test", [this](const Ping& ping) {
    auto builder = sender_.MakeBuilder();
    Pong::Builder pong = builder.MakeBuilder<Pong>();
    pong.add_value(ping.value());
    pong.add_initial_send_time(ping.send_time());
    // A failed send is counted, not logged: logging allocates, and a
    // realtime handler must not (--die_on_malloc).
    if (builder.Send(pong.Finish()) == RawSender::Error::kOk) {
      ++answered_;
    } else {
      ++not_sent_;
    }
  });
}

}  // namespace aos::examples
