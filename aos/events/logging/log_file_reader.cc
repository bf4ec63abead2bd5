#include "aos/events/logging/log_file_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "aos/configuration_lookup.h"
#include "aos/events/logging/log_format.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::logging {
namespace {

// The largest chunk aos_logger can write for `config`'s channels
// (log_format.h).
uint64_t LargestLoggerChunk(const Configuration& config) {
  uint64_t largest_record = kMaxRemoteRecordSize;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      largest_record = std::max<uint64_t>(
          largest_record,
          kMessageRecordOverhead +
              static_cast<uint64_t>(std::max(channel->max_size(), 0)));
    }
  }
  return kMaxChunkSize - 1 + largest_record;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogFileReader>> LogFileReader::Open(
    std::string_view path, LogReadOptions options) {
  absl::StatusOr<std::unique_ptr<McapReader>> mcap = McapReader::Open(
      path, {.memory_budget_bytes = options.memory_budget_bytes,
             .budget_name = std::move(options.budget_name)});
  if (!mcap.ok()) return mcap.status();
  std::unique_ptr<LogFileReader> log(new LogFileReader(std::move(*mcap)));
  const McapReader& reader = *log->mcap_;
  const std::string& shown = reader.display_path();
  for (const McapAttachment& attachment : reader.attachments()) {
    if (attachment.name == kConfigAttachment) log->config_ = attachment.data;
  }
  if (log->config_.empty()) {
    return absl::InvalidArgumentError(
        StrCat(shown, ": not an aos log: it has no ", kConfigAttachment,
               " attachment (the configuration aos_logger stores)"));
  }
  flatbuffers::Verifier verifier(
      reinterpret_cast<const uint8_t*>(log->config_.data()),
      log->config_.size());
  if (!VerifyConfigurationBuffer(verifier)) {
    return absl::InvalidArgumentError(
        StrCat(shown, ": its ", kConfigAttachment,
               " attachment is not a valid aos.Configuration"));
  }
  // One index of the channels: a forged log can name tens of thousands of
  // channels in as many lost-message entries, and a scan per name would
  // take their product.
  if (log->configuration()->channels() != nullptr) {
    for (const Channel* channel : *log->configuration()->channels()) {
      if (channel->name() == nullptr || channel->type() == nullptr) continue;
      log->channels_by_name_.try_emplace(
          {channel->name()->string_view(), channel->type()->string_view()},
          channel);
    }
  }
  for (const auto& [id, channel] : reader.channels()) {
    if (channel.topic == kOriginsTopic &&
        !channel.metadata.contains(std::string(kChannelType))) {
      log->records_origins_ = true;
    }
  }
  const uint64_t largest_chunk = LargestLoggerChunk(*log->configuration());
  log->mcap_->LimitChunkSize(
      largest_chunk,
      StrCat("the largest chunk aos_logger writes for this log's channels: ",
             kMaxChunkSize, " bytes less one, plus their largest record"));
  for (const McapMetadata& metadata : reader.metadata()) {
    if (metadata.name == kLoggerMetadata) {
      auto node = metadata.metadata.find(std::string(kLoggerNode));
      if (node != metadata.metadata.end()) log->node_name_ = node->second;
      auto boot = metadata.metadata.find(std::string(kLoggerBootUuid));
      if (boot != metadata.metadata.end()) {
        absl::StatusOr<UUID> parsed = UUID::Parse(boot->second);
        if (parsed.ok()) {
          log->boot_uuid_ = *parsed;
        } else {
          log->problems_.push_back(
              StrCat(shown, ": its ", kLoggerMetadata, " metadata's ",
                     kLoggerBootUuid, " ", Printable(boot->second),
                     " is not a UUID; the logged node's boot is unknown (all "
                     "zeros)"));
        }
      }
    }
    if (metadata.name == kLostMetadata) {
      // The last record counts: it has the latest totals.
      log->lost_.clear();
      for (const auto& [channel, count] : metadata.metadata) {
        const size_t space = channel.find(' ');
        const Channel* found = log->ChannelByNameAndType(
            std::string_view(channel).substr(0, space),
            space == std::string::npos
                ? std::string_view()
                : std::string_view(channel).substr(space + 1));
        uint64_t value = 0;
        const auto [end, error] =
            std::from_chars(count.data(), count.data() + count.size(), value);
        if (found != nullptr && error == std::errc() &&
            end == count.data() + count.size()) {
          log->lost_[found] = value;
        }
      }
    }
  }
  if (!log->node_name_.empty()) {
    log->node_ = configuration::GetNode(*log->configuration(), log->node_name_);
    if (log->node_ == nullptr) {
      return absl::InvalidArgumentError(
          StrCat(shown, ": it was logged on node ", Printable(log->node_name_),
                 ", which its configuration does not have"));
    }
  }
  log->SyncProblems();
  return log;
}

LogFileReader::LogFileReader(std::unique_ptr<McapReader> mcap)
    : mcap_(std::move(mcap)) {}

const Channel* LogFileReader::ChannelByNameAndType(
    std::string_view name, std::string_view type) const {
  auto found = channels_by_name_.find({name, type});
  return found == channels_by_name_.end() ? nullptr : found->second;
}

void LogFileReader::SyncProblems() {
  const std::vector<std::string>& problems = mcap_->problems();
  for (; mcap_problems_seen_ < problems.size(); ++mcap_problems_seen_) {
    problems_.push_back(problems[mcap_problems_seen_]);
  }
}

std::vector<const Channel*> LogFileReader::logged_channels() const {
  std::vector<const Channel*> result;
  for (const auto& [id, mcap_channel] : mcap_->channels()) {
    auto type = mcap_channel.metadata.find(std::string(kChannelType));
    if (type == mcap_channel.metadata.end()) continue;
    const Channel* channel =
        ChannelByNameAndType(mcap_channel.topic, type->second);
    if (channel != nullptr) result.push_back(channel);
  }
  return result;
}

const LogFileReader::LoggedChannel& LogFileReader::FindChannel(
    uint16_t mcap_channel) {
  auto known = channels_.find(mcap_channel);
  if (known != channels_.end()) return known->second;
  LoggedChannel logged;
  auto found = mcap_->channels().find(mcap_channel);
  if (found == mcap_->channels().end()) {
    problems_.push_back(StrCat(display_path(), ": messages on MCAP channel ",
                               mcap_channel,
                               ", which the log never declares; skipped"));
    return channels_.emplace(mcap_channel, logged).first->second;
  }
  const McapChannel& channel = found->second;
  auto type = channel.metadata.find(std::string(kChannelType));
  if (type == channel.metadata.end() && channel.topic == kRemoteMessageTopic) {
    logged.remote_records = true;
  } else if (type == channel.metadata.end() && channel.topic == kOriginsTopic) {
    logged.origins_records = true;
  } else {
    if (type != channel.metadata.end()) {
      logged.channel = ChannelByNameAndType(channel.topic, type->second);
    }
    if (logged.channel == nullptr) {
      problems_.push_back(
          StrCat(display_path(), ": MCAP channel ", Printable(channel.topic),
                 " matches no channel of the logged configuration; skipped"));
    } else {
      logged.forwarded =
          configuration::ChannelIsForwardedTo(*logged.channel, node_);
    }
  }
  return channels_.emplace(mcap_channel, logged).first->second;
}

void LogFileReader::KeepRemoteRecord(std::string_view data, uint64_t log_time) {
  std::optional<RemoteRecord> record = DecodeRemoteRecord(data);
  if (record.has_value()) {
    remote_records_.Keep(*record);
  } else if (!malformed_remote_said_) {
    malformed_remote_said_ = true;
    problems_.push_back(
        StrCat(display_path(), ": the remote record at log time ", log_time,
               " ns is not a valid ", kRemoteMessageType,
               " (damaged or hand-made log); skipped, as are any later such"));
  }
}

void LogFileReader::FillRemoteFields(uint16_t mcap_channel,
                                     const LoggedChannel& logged,
                                     Context* context) {
  if (!logged.forwarded) {
    context->monotonic_remote_time = context->monotonic_event_time;
    context->realtime_remote_time = context->realtime_event_time;
    context->remote_queue_index = context->queue_index;
    context->source_boot_uuid = boot_uuid_;
    return;
  }
  std::optional<RemoteRecord> record =
      remote_records_.Take(mcap_channel, context->queue_index);
  if (record.has_value()) {
    const RemoteOrigin& origin = record->origin;
    context->monotonic_remote_time = origin.monotonic_remote_time;
    context->realtime_remote_time = origin.realtime_remote_time;
    context->remote_queue_index = origin.remote_queue_index;
    context->source_boot_uuid = origin.source_boot_uuid;
    return;
  }
  // Unknown: Context's defaults.
  if (unknown_remote_said_.insert(mcap_channel).second) {
    problems_.push_back(StrCat(
        display_path(), ": the message of ",
        InlinePrintable(StringView(logged.channel->name())), " ",
        InlinePrintable(StringView(logged.channel->type())),
        " (forwarded from ",
        InlinePrintable(StringView(logged.channel->source_node())),
        ") at log time ",
        context->monotonic_event_time.time_since_epoch().count(),
        " ns has no valid remote record; its remote fields are unknown, as "
        "are those of any later such message of the channel"));
  }
}

void LogFileReader::KeepOriginsRecord(std::string_view data,
                                      uint64_t log_time) {
  std::optional<OriginsRecord> record = DecodeOriginsRecord(data);
  if (record.has_value()) {
    origins_records_.Keep(*record);
  } else {
    malformed_origins_at_ = log_time;
  }
}

void LogFileReader::SayDamagedOrigins(uint16_t mcap_channel,
                                      const LogMessage& message,
                                      std::string_view why) {
  if (!damaged_origins_said_.insert(mcap_channel).second) return;
  problems_.push_back(StrCat(
      display_path(), ": the message of ",
      InlinePrintable(StringView(message.channel->name())), " ",
      InlinePrintable(StringView(message.channel->type())), " at log time ",
      message.context.monotonic_event_time.time_since_epoch().count(),
      " ns has a damaged origins record (", why,
      "); its origins are unknown, as are those of any later such message "
      "of the channel"));
}

void LogFileReader::SayStrayOrigins() {
  if (!malformed_origins_at_.has_value()) return;
  if (!stray_origins_said_) {
    stray_origins_said_ = true;
    problems_.push_back(StrCat(
        display_path(), ": the origins record at log time ",
        *malformed_origins_at_, " ns is not a valid ", kOriginsType,
        " (damaged or hand-made log), and no message of its time follows it; "
        "skipped, as are any later such"));
  }
  malformed_origins_at_.reset();
}

void LogFileReader::FillOrigins(uint16_t mcap_channel, bool after_malformed,
                                LogMessage* message) {
  Context& context = message->context;
  if (!records_origins_) {
    message->origins_known = false;
    return;
  }
  std::optional<OriginsRecord> record =
      origins_records_.Take(mcap_channel, context.queue_index);
  if (!record.has_value()) {
    // No record: it carried none, unless the record just before it was
    // its own, malformed.
    if (after_malformed) {
      message->origins_known = false;
      SayDamagedOrigins(mcap_channel, *message,
                        StrCat("not a valid ", kOriginsType));
    }
    return;
  }
  uint32_t invalid = 0;
  PathOrigins origins = PathOrigins::FromRaw(
      record->origins, context.monotonic_event_time.time_since_epoch().count(),
      &invalid);
  if (invalid > 0) {
    message->origins_known = false;
    SayDamagedOrigins(
        mcap_channel, *message,
        StrCat(invalid, " of its ", record->origins.count,
               " origins cannot be true: more than ", kMaxPathOrigins,
               ", id 0, 0 hops, an id twice, or later than the message"));
    return;
  }
  context.origins = origins;
}

std::optional<LogMessage> LogFileReader::Next() {
  while (true) {
    std::optional<McapMessage> message = mcap_->Next();
    SyncProblems();
    if (!message.has_value()) {
      SayStrayOrigins();
      return std::nullopt;
    }
    const LoggedChannel& logged = FindChannel(message->channel_id);
    if (logged.remote_records) {
      KeepRemoteRecord(message->data, message->log_time);
      continue;
    }
    if (logged.origins_records) {
      SayStrayOrigins();
      KeepOriginsRecord(message->data, message->log_time);
      continue;
    }
    // A malformed origins record belongs to the message just after it.
    const bool after_malformed = malformed_origins_at_ == message->log_time;
    if (!after_malformed) SayStrayOrigins();
    malformed_origins_at_.reset();
    if (logged.channel == nullptr) continue;
    LogMessage result;
    result.channel = logged.channel;
    Context& context = result.context;
    context.monotonic_event_time = monotonic_clock::time_point(
        monotonic_clock::duration(message->log_time));
    context.realtime_event_time = realtime_clock::time_point(
        realtime_clock::duration(message->publish_time));
    context.queue_index = message->sequence;
    context.size = message->data.size();
    context.data = message->data.data();
    if (reinterpret_cast<uintptr_t>(context.data) % kLogMessageAlignment != 0) {
      aligned_.resize((context.size + kLogMessageAlignment - 1) /
                      kLogMessageAlignment);
      std::memcpy(aligned_.data(), message->data.data(), context.size);
      context.data = aligned_.data();
    }
    FillRemoteFields(message->channel_id, logged, &context);
    FillOrigins(message->channel_id, after_malformed, &result);
    return result;
  }
}

}  // namespace aos::logging
