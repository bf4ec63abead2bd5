#ifndef AOS_EVENTS_LOGGING_LOG_READER_H_
#define AOS_EVENTS_LOGGING_LOG_READER_H_

// Replays a log into simulation: every recorded message is sent again at
// its recorded time, on its node, so new code runs against recorded data.
//
//   auto log = LogFileReader::Open("/tmp/run.mcap");
//   SimulatedEventLoopFactory factory((*log)->configuration());
//   LogReader replay(log->get(), &factory);   // before the node's other loops
//   std::unique_ptr<EventLoop> test = factory.MakeEventLoop("test");
//   test->MakeWatcher("/test", [&](const Pong& pong) { ... });
//   factory.Run();   // returns after the log's last message
//
// Time: the logged node's simulated monotonic clock equals the recorded
// one: the replayer sets the node's offset so that simulated time 0 is one
// second before the log's first message (loops made for the replay are
// running by then), and sends each message at exactly its recorded
// monotonic_sent_time. A watcher sees it with that monotonic_event_time.
// Realtime is the simulation's (realtime_event_time is not the recorded
// one).
//
// What is sent: every logged channel the node may send on (forwarded
// channels are skipped, counted in skipped_channels()), except those
// `options.channel_filter` rejects: leave out the channels the code under
// test sends itself, e.g. to run a new pong against recorded pings.
//
// Lifetime: `log` and `factory` must outlive the replayer; the replayer is
// a loop of the factory ("log_reader", no timing reports), so destroy it
// before the factory. It reads the log lazily, one message ahead.

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "aos/events/logging/log_file_reader.h"
#include "aos/events/simulated_event_loop.h"

namespace aos::logging {

struct ReplayOptions {
  // Channels to replay; null: every one the node may send on.
  std::function<bool(const Channel&)> channel_filter;
  // After the last message, call the factory's Exit(), so Run() returns
  // (other loops' timers would keep it running forever).
  bool exit_when_done = true;
};

class LogReader {
 public:
  // Sets the node's clock and starts replaying when the factory runs.
  // `factory` must be made from log->configuration() (channel pointers are
  // shared), and no loop of the logged node may exist yet (aborts
  // otherwise: the clock would jump under it).
  LogReader(LogFileReader* log, SimulatedEventLoopFactory* factory,
            ReplayOptions options = {});
  ~LogReader();

  // Messages sent so far, and the number of send errors (a log sent faster
  // than the channel's frequency allows).
  uint64_t replayed_messages() const { return replayed_; }
  uint64_t send_errors() const { return send_errors_; }
  // Logged channels this node may not send on (forwarded from elsewhere).
  const std::vector<const Channel*>& skipped_channels() const {
    return skipped_;
  }
  // The loop that sends the messages.
  EventLoop* event_loop() { return event_loop_.get(); }

 private:
  // The position of `channel` in the log's configuration.
  size_t IndexOf(const Channel* channel) const;
  // Reads ahead to the next message to replay and schedules it.
  void ScheduleNext();
  void SendDue();

  LogFileReader* const log_;
  SimulatedEventLoopFactory* const factory_;
  const bool exit_when_done_;
  std::unique_ptr<EventLoop> event_loop_;
  // Indexed by the channel's position in the configuration; null: not
  // replayed.
  std::vector<std::unique_ptr<RawSender>> senders_;
  std::vector<const Channel*> skipped_;
  TimerHandler* timer_ = nullptr;
  TimerHandler* exit_timer_ = nullptr;
  std::optional<LogMessage> next_;
  uint64_t replayed_ = 0;
  uint64_t send_errors_ = 0;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_READER_H_
