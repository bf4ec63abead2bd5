// A test helper for lttng_pingpong_test: two simulated event loops where a
// fetcher falls so far behind that it loses messages, so the trace gets
// aos:messages_lost (and simulated loops' aos:callback_register) events.
//
//   lost_messages_sim --config=examples/pingpong_config.json
//
// "lost_sender" sends a Ping on /test every millisecond for 10 simulated
// seconds, more than the queue holds; then "lost_fetcher" calls FetchNext
// once. Prints "lost N": the messages its fetcher counted as lost, which
// the one aos:messages_lost event must carry.

#include <chrono>
#include <cstdio>
#include <string>

#include "aos/config_flag.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: lost_messages_sim --config=CONFIG\n"
                  "A fetcher that loses messages, in simulation, for LTTng.");
  auto config = aos::ReadConfigFlag("examples/pingpong_config.json");
  if (!config.ok()) {
    aos::ExitForUserError(std::string(config.status().message()));
  }

  aos::SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<aos::EventLoop> sender_loop =
      factory.MakeEventLoop("lost_sender");
  std::unique_ptr<aos::EventLoop> fetcher_loop =
      factory.MakeEventLoop("lost_fetcher");
  aos::Sender<aos::examples::Ping> sender =
      sender_loop->MakeSender<aos::examples::Ping>("/test");
  aos::Fetcher<aos::examples::Ping> fetcher =
      fetcher_loop->MakeFetcher<aos::examples::Ping>("/test");

  int count = 0;
  aos::TimerHandler* timer = sender_loop->AddTimer([&]() {
    auto builder = sender.MakeBuilder();
    aos::examples::Ping::Builder ping =
        builder.MakeBuilder<aos::examples::Ping>();
    ping.add_value(++count);
    builder.CheckOk(builder.Send(ping.Finish()));
  });
  timer->set_name("send");
  sender_loop->OnRun([&]() {
    timer->Schedule(sender_loop->monotonic_now(), std::chrono::milliseconds(1));
  });
  factory.RunFor(std::chrono::seconds(10));
  fetcher.FetchNext();
  std::printf("lost %llu\n",
              static_cast<unsigned long long>(
                  fetcher_loop->fetchers().front()->timing().lost_messages));
  return 0;
}
