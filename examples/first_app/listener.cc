// listener: watches /first_app first_app.Tick and counts the ticks it gets;
// says how many when stopped with Ctrl-C or SIGTERM (docs/first_app.md).
#include <iostream>
#include <string>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "examples/first_app/first_app_generated.h"

namespace first_app {

// The work, on any aos::EventLoop (see talker.cc).
class Listener {
 public:
  explicit Listener(aos::EventLoop* loop) {
    // Called once for every Tick sent after the loop started, in order.
    loop->MakeWatcher("/first_app", [this](const Tick& tick) {
      ++received_;
      last_count_ = tick.count();
    });
  }

  int received() const { return received_; }
  int last_count() const { return last_count_; }

 private:
  int received_ = 0;
  int last_count_ = 0;
};

}  // namespace first_app

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: listener [--config=FILE] [--shm_base=DIR]\n"
                  "Counts the /first_app first_app.Tick messages until "
                  "Ctrl-C.");
  aos::RefuseArguments(argc, argv);
  auto config = aos::ReadConfigFlag("examples/first_app/first_app_config.json");
  if (!config.ok()) {
    aos::ExitForUserError(std::string(config.status().message()));
  }

  aos::ShmEventLoop loop(&config->message(), "listener");
  first_app::Listener listener(&loop);
  loop.Run();
  std::cout << "listener: received " << listener.received()
            << " ticks, the last with count " << listener.last_count() << "\n";
  return 0;
}
