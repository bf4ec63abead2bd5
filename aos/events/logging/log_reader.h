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
// Time: the logged node's simulated clocks equal the recorded ones. The
// replayer sets the node's monotonic offset so that simulated time 0 is one
// second before the log's first message (loops made for the replay are
// running by then), and sends each message at exactly its recorded
// monotonic_sent_time: a watcher sees it with that monotonic_event_time.
// It sets the node's realtime offset to the first message's recorded
// realtime - monotonic, so a replayed message's realtime_event_time is its
// recorded realtime_sent_time (exactly, as long as the recording node's
// realtime clock did not step or drift against its monotonic one: a
// simulated recording, or a short real one).
//
// What is sent: every logged channel, on the logged node, except those
// `options.channel_filter` rejects: leave out the channels the code under
// test sends itself, e.g. to run a new pong against recorded pings. That
// includes channels forwarded to the node from others (the message bridge
// re-sent them there): they are sent with RawSender::Send(RemoteOrigin),
// as the bridge does, so watchers see their recorded remote fields
// (monotonic_remote_time, realtime_remote_time, remote_queue_index,
// source_boot_uuid). One whose remote fields the log lacks
// (LogFileReader: unknown) is sent with an empty origin: the simulated
// channel then gives it the local times and queue index as remote ones and
// an all-zero source_boot_uuid. The replayer sends only on the logged node;
// nothing recorded is forwarded again to where it came from, but the
// logged node's own channels that have destinations (e.g. its /aos timing
// reports, a reply channel) are forwarded to the other nodes by the
// simulated network as any message sent there would be.
//
// Path origins: every message is sent with the origins it carried when
// recorded (LogFileReader), exactly (same ids, hops, times, uncertainties
// and dropped count), so a watcher measures the recorded path ages again:
// a forwarded one as RemoteOrigin::origins, as the bridge sends them, a
// local one through RawSender::SetOrigins. A message whose origins are
// unknown (a damaged record, a log from before origins were recorded) is
// sent with none, not with the replayer's timer as its origin.
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
  // Sets the node's clocks and starts replaying when the factory runs.
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
  struct ReplayedChannel {
    // Null: not replayed.
    std::unique_ptr<RawSender> sender;
    // Sent with the recorded remote origin.
    bool forwarded = false;
  };

  // Indexed by the channel's position in the configuration.
  std::vector<ReplayedChannel> channels_;
  TimerHandler* timer_ = nullptr;
  TimerHandler* exit_timer_ = nullptr;
  std::optional<LogMessage> next_;
  uint64_t replayed_ = 0;
  uint64_t send_errors_ = 0;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_READER_H_
