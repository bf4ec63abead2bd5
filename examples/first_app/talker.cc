// talker: sends a first_app.Tick on /first_app 200 times a second, from a
// timer, until Ctrl-C or SIGTERM (docs/first_app.md).
#include <chrono>
#include <iostream>
#include <string>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "examples/first_app/first_app_generated.h"

namespace first_app {

// The work, on any aos::EventLoop: the shared-memory one of main() below,
// or a simulated one in a test.
class Talker {
 public:
  explicit Talker(aos::EventLoop* loop)
      : loop_(loop), sender_(loop->MakeSender<Tick>("/first_app")) {
    aos::TimerHandler* timer = loop_->AddTimer([this]() { Send(); });
    timer->set_name("tick");  // the name the timing reports show
    loop_->OnRun([this, timer]() {
      // Every 5 ms from now on: 200 times a second.
      timer->Schedule(loop_->monotonic_now(), std::chrono::milliseconds(5));
    });
  }

  int sent() const { return count_; }

 private:
  void Send() {
    auto builder = sender_.MakeBuilder();
    Tick::Builder tick = builder.MakeBuilder<Tick>();
    tick.add_count(++count_);
    // A send that fails ends the program, naming the channel and the error.
    builder.CheckOk(builder.Send(tick.Finish()));
  }

  aos::EventLoop* loop_;
  aos::Sender<Tick> sender_;
  int count_ = 0;
};

}  // namespace first_app

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: talker [--config=FILE] [--shm_base=DIR]\n"
                  "Sends /first_app first_app.Tick 200 times a second until "
                  "Ctrl-C.");
  aos::RefuseArguments(argc, argv);
  // --config, or else the first_app_config.json the build made.
  auto config = aos::ReadConfigFlag("examples/first_app/first_app_config.json");
  if (!config.ok()) {
    aos::ExitForUserError(std::string(config.status().message()));
  }

  aos::ShmEventLoop loop(&config->message(), "talker");
  first_app::Talker talker(&loop);
  loop.Run();  // until Ctrl-C or SIGTERM
  std::cout << "talker: sent " << talker.sent() << " ticks\n";
  return 0;
}
