#ifndef AOS_TOOLS_CHANNEL_RATES_H_
#define AOS_TOOLS_CHANNEL_RATES_H_

// What `aos_channels` shows (like `ros2 topic list -v` and `ros2 topic hz`
// together): every channel a node can read, how many messages were sent on
// it while we watched and at what rate, how long ago the last one was sent,
// its size, and which applications send on it.
//
//   ChannelRates rates(&loop);                  // before the loop runs
//   TimerHandler* poll = loop.AddTimer([&] { rates.Poll(); ... });
//   ... schedule `poll` every second ...
//   std::cout << rates.Render(loop.monotonic_now());
//
// It only polls: a fetcher per channel, read when Poll() is called (the
// first time when the loop starts). No sender signals it and it registers
// no watcher, so watching a realtime system costs that system nothing. The
// counts come from queue indices (messages [first, last] were sent), so a
// message overwritten before a poll still counts, and nothing is lost
// however fast a channel is, as long as fewer than 2^32 messages come on
// one between two polls.
//
// Senders: where the config has timing report channels (/aos), the latest
// report of every application (reports sent in the last kSenderReportAge)
// names the channels it has senders on; programs that publish no timing
// report (aos_send, aos_dump, a loop with SkipTimingReport) are not seen.
//
// Allocates in Poll() and Render(): a tool's loop, not a realtime one.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"

namespace aos {

class ChannelRates {
 public:
  // Reports older than this (by their send time on this node) no longer
  // name senders: their application may be gone.
  static constexpr std::chrono::seconds kSenderReportAge{5};

  // Makes a fetcher for every channel of `loop`'s config readable on its
  // node, and polls once when the loop starts. `loop` must outlive this and
  // not have run yet.
  explicit ChannelRates(EventLoop* loop);

  // Reads the newest message of every channel, and every timing report
  // since the last poll.
  void Poll();

  struct Row {
    const Channel* channel = nullptr;
    // Messages sent between the first poll and the last one.
    uint64_t messages = 0;
    // Messages the channel has had since its queue was made (its latest
    // queue index + 1, modulo 2^32); empty before the first.
    std::optional<uint64_t> total = std::nullopt;
    // messages / (last poll - first poll) in messages a second; NaN before
    // two polls at different times.
    double rate_hz = 0;
    // When the newest message was sent (this node's clock); empty if none.
    std::optional<monotonic_clock::time_point> last_sent = std::nullopt;
    // Bytes of the newest message.
    size_t size = 0;
    // "name" (single node) or "node name" of each application whose latest
    // report has a sender on it, sorted, escaped.
    std::set<std::string> senders = {};
  };
  // One row per channel, in the config's order.
  std::vector<Row> Rows() const;

  // A table of Rows() for a terminal: a heading line ("N channels readable
  // on node pi1, watched for 3.00 s"), then one row per channel: channel,
  // rate (/s), messages, total, last (s before `now`), size (B), senders.
  // Names are escaped.
  std::string Render(monotonic_clock::time_point now) const;

 private:
  struct Watched {
    const Channel* channel;
    // In the config's channels.
    int index;
    std::unique_ptr<RawFetcher> fetcher;
    // The newest queue index at the first poll (empty: none was sent).
    std::optional<uint32_t> first_index = std::nullopt;
    bool polled = false;
    std::optional<uint32_t> last_index = std::nullopt;
  };
  struct Application {
    monotonic_clock::time_point sent;
    std::vector<int> sender_channels;
  };

  EventLoop* const loop_;
  std::vector<Watched> watched_;
  std::vector<std::unique_ptr<RawFetcher>> reports_;
  // By (node, name, pid).
  std::map<std::tuple<std::string, std::string, int>, Application>
      applications_;
  std::optional<monotonic_clock::time_point> first_poll_;
  monotonic_clock::time_point last_poll_;
};

}  // namespace aos

#endif  // AOS_TOOLS_CHANNEL_RATES_H_
