#include "aos/events/logging/log_reader.h"

#include <algorithm>

#include "aos/configuration_lookup.h"
#include "aos/events/logging/remote_record.h"
#include "aos/flatbuffer_string_view.h"
#include "glog/logging.h"

namespace aos::logging {

LogReader::LogReader(LogFileReader* log, SimulatedEventLoopFactory* factory,
                     ReplayOptions options)
    : log_(log), factory_(factory), exit_when_done_(options.exit_when_done) {
  CHECK(factory->configuration() == log->configuration())
      << "LogReader: make the SimulatedEventLoopFactory from the log's "
         "configuration()";
  // The log has what the real bridge published: no second copy from the
  // simulated network's.
  factory->DisableStatistics();
  next_ = log_->Next();
  if (next_.has_value()) {
    const monotonic_clock::duration first =
        next_->context.monotonic_event_time.time_since_epoch();
    factory->SetMonotonicOffset(log_->node(),
                                std::max(monotonic_clock::duration::zero(),
                                         first - std::chrono::seconds(1)));
    factory->SetRealtimeOffset(
        log_->node(),
        next_->context.realtime_event_time.time_since_epoch() - first);
  }
  event_loop_ = factory->MakeEventLoop("log_reader", log_->node());
  event_loop_->SkipTimingReport();
  const Configuration& config = *log_->configuration();
  channels_.resize(config.channels() == nullptr ? 0
                                                : config.channels()->size());
  for (const Channel* channel : log_->logged_channels()) {
    if (options.channel_filter && !options.channel_filter(*channel)) continue;
    ReplayedChannel& replayed = channels_[IndexOf(channel)];
    // The simulated loop sends on a channel forwarded to its node, as the
    // message bridge's loop does in production.
    replayed.sender = event_loop_->MakeRawSender(channel);
    replayed.forwarded =
        configuration::ChannelIsForwardedTo(*channel, log_->node());
  }
  timer_ = event_loop_->AddTimer([this]() { SendDue(); });
  timer_->set_name("replay");
  exit_timer_ = event_loop_->AddTimer([this]() { factory_->Exit(); });
  exit_timer_->set_name("replay_done");
  event_loop_->OnRun([this]() { ScheduleNext(); });
}

LogReader::~LogReader() = default;

size_t LogReader::IndexOf(const Channel* channel) const {
  // Linear: a configuration has tens of channels.
  const auto& channels = *log_->configuration()->channels();
  for (size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] == channel) return i;
  }
  LOG(FATAL) << "channel " << StringView(channel->name())
             << " is not in the log's configuration";
}

void LogReader::ScheduleNext() {
  while (next_.has_value()) {
    if (channels_[IndexOf(next_->channel)].sender != nullptr) {
      timer_->Schedule(next_->context.monotonic_event_time);
      return;
    }
    next_ = log_->Next();
  }
  // Exit from a timer due now: it runs after the watchers of the last
  // message, whose deliveries were scheduled first.
  if (exit_when_done_) exit_timer_->Schedule(event_loop_->monotonic_now());
}

void LogReader::SendDue() {
  const monotonic_clock::time_point now = event_loop_->monotonic_now();
  while (next_.has_value() && next_->context.monotonic_event_time <= now) {
    const ReplayedChannel& replayed = channels_[IndexOf(next_->channel)];
    if (replayed.sender != nullptr) {
      const Context& context = next_->context;
      // The recorded origins as they were (none where unknown): forwarded
      // as the bridge forwards them, or set for a local send, which would
      // otherwise carry the replay timer as its origin.
      RawSender::Error error;
      if (replayed.forwarded) {
        RemoteOrigin origin = RemoteOriginOf(context);
        origin.origins = &context.origins;
        error = replayed.sender->Send(context.data, context.size, origin);
      } else {
        // Replaying a message is not a hop.
        replayed.sender->SetOriginsAsSent(context.origins);
        error = replayed.sender->Send(context.data, context.size);
      }
      if (error == RawSender::Error::kOk) {
        ++replayed_;
      } else {
        ++send_errors_;
      }
    }
    next_ = log_->Next();
  }
  ScheduleNext();
}

}  // namespace aos::logging
