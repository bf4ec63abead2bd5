#ifndef AOS_TOOLS_JSON_SENDER_H_
#define AOS_TOOLS_JSON_SENDER_H_

// What `aos_send` does, on any event loop: one message, given as JSON, sent
// on one channel a number of times at a rate, as AOS's aos_send and
// `ros2 topic pub` do.
//
//   absl::StatusOr<std::unique_ptr<aos::JsonSender>> sender =
//       aos::JsonSender::Make(&loop, channel, R"({ "value": 1 })",
//                             {.count = 5, .rate_hz = 10});
//   if (!sender.ok()) aos::ExitForUserError(sender.status().message());
//   loop.Run();  // returns after the 5th send (or the first failed one)
//   if (!(*sender)->status().ok()) ...
//
// The JSON is parsed once, with the channel's schema from the flattened
// config (the one aos_config built embeds it), in the dialect
// JsonToFlatbuffer reads (field names may be unquoted, enums by name). The
// same bytes are sent each time. Sending starts when the loop starts: the
// first message at once, then one every 1 / rate_hz s; with rate_hz 0, all
// `count` back to back in that first callback. After the last one, or the
// first that fails (sent faster than the channel's frequency allows), it
// calls the loop's Exit().
//
// Sends carry the path origin of the timer that sends them, as any timer's
// sends do. Sending never allocates; Make() does.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"

namespace aos {

class JsonSender {
 public:
  struct Options {
    // Messages to send; 0: until the loop is stopped (needs rate_hz).
    int64_t count = 1;
    // Messages a second; 0: all `count` at once.
    double rate_hz = 0;
  };

  // Parses `json` for `channel` (which `loop`'s node must be allowed to
  // send: see FindSendChannel) and prepares the sends. Errors, one line each
  // (InvalidArgument): the JSON does not parse, names a field the type
  // lacks or has a value of the wrong type ("/test aos.examples.Ping:2:11:
  // unknown field: valu": the channel, the line and column, and the field), the
  // message is larger than the channel's max_size, count is negative, rate_hz
  // is negative or not a number, or count is 0 without a rate;
  // FailedPrecondition: the config has no schema for the channel. Call it
  // before `loop` first runs (it adds an OnRun callback); nothing is sent
  // before the loop runs.
  static absl::StatusOr<std::unique_ptr<JsonSender>> Make(
      EventLoop* loop, const Channel* channel, std::string_view json,
      Options options);

  // OK, or why the last send failed (naming the channel and the message's
  // number); the loop was asked to exit then.
  const absl::Status& status() const { return status_; }
  // Messages sent so far.
  int64_t sent() const { return sent_; }

 private:
  JsonSender(EventLoop* loop, const Channel* channel,
             std::vector<uint8_t> message, Options options);
  // Sends once (or `count` times without a rate); exits when done.
  void SendDue();

  EventLoop* const loop_;
  const std::vector<uint8_t> message_;
  const Options options_;
  std::unique_ptr<RawSender> sender_;
  TimerHandler* timer_ = nullptr;
  absl::Status status_;
  int64_t sent_ = 0;
};

}  // namespace aos

#endif  // AOS_TOOLS_JSON_SENDER_H_
