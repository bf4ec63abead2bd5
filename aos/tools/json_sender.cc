#include "aos/tools/json_sender.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "aos/json_to_flatbuffer.h"
#include "aos/tools/aos_dump_channel.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"

namespace aos {

absl::StatusOr<std::unique_ptr<JsonSender>> JsonSender::Make(
    EventLoop* loop, const Channel* channel, std::string_view json,
    Options options) {
  const std::string described = DescribeDumpChannel(*channel);
  if (absl::Status status = CheckNotNegative("--count", options.count);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckInRange("--rate_hz", options.rate_hz, 0.0,
                                         std::numeric_limits<double>::max(),
                                         " is not a rate: give 0 or more");
      !status.ok()) {
    return status;
  }
  if (options.count == 0 && options.rate_hz == 0) {
    return absl::InvalidArgumentError(
        "--count=0 sends until stopped: give a --rate_hz too");
  }
  if (channel->schema() == nullptr ||
      channel->schema()->root_table() == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("the config has no schema for ", described,
               "; use the config aos_config built (e.g. bazel-bin/examples/"
               "pingpong_config.json)"));
  }
  absl::StatusOr<flatbuffers::DetachedBuffer> message = JsonToFlatbuffer(
      json, *channel->schema(),
      {.source_name = described, .table_name = channel->type()->string_view()});
  if (!message.ok()) {
    // Its first line names the channel, line, column and what is wrong; the
    // lines under it quote the JSON around the place, which the user has.
    const std::string error = StrCat(message.status().message());
    return absl::Status(message.status().code(),
                        error.substr(0, error.find('\n')));
  }
  const size_t max_size =
      static_cast<size_t>(std::max<int32_t>(0, channel->max_size()));
  if (message->size() > max_size) {
    return absl::InvalidArgumentError(
        StrCat(described, ": the message is ", message->size(),
               " bytes, more than the channel's max_size ", max_size));
  }
  return std::unique_ptr<JsonSender>(new JsonSender(
      loop, channel,
      std::vector<uint8_t>(message->data(), message->data() + message->size()),
      options));
}

JsonSender::JsonSender(EventLoop* loop, const Channel* channel,
                       std::vector<uint8_t> message, Options options)
    : loop_(loop),
      message_(std::move(message)),
      options_(options),
      sender_(loop->MakeRawSender(channel)) {
  timer_ = loop_->AddTimer([this]() { SendDue(); });
  loop_->OnRun([this]() {
    if (options_.rate_hz > 0) {
      timer_->Schedule(
          loop_->monotonic_now(),
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::duration<double>(1.0 / options_.rate_hz)));
    } else {
      timer_->Schedule(loop_->monotonic_now());
    }
  });
}

void JsonSender::SendDue() {
  const int64_t due = options_.rate_hz > 0 ? 1 : options_.count;
  for (int64_t i = 0; i < due; ++i) {
    const RawSender::Error error =
        sender_->Send(message_.data(), message_.size());
    if (error != RawSender::Error::kOk) {
      status_ = absl::FailedPreconditionError(StrCat(
          DescribeDumpChannel(*sender_->channel()), ": message ", sent_ + 1,
          " not sent: ",
          error == RawSender::Error::kMessagesSentTooFast
              ? std::string_view("sent faster than the channel's frequency "
                                 "allows (lower --rate_hz or --count)")
              : RawSender::ErrorToString(error)));
      timer_->Disable();
      loop_->Exit();
      return;
    }
    ++sent_;
  }
  if (options_.count > 0 && sent_ >= options_.count) {
    timer_->Disable();
    loop_->Exit();
  }
}

}  // namespace aos
