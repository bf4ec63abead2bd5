#include "aos/events/logging/logger.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/origins_record.h"
#include "aos/events/logging/remote_record.h"
#include "aos/flatbuffer_merge.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"
#include "flatbuffers/reflection.h"
#include "glog/logging.h"

namespace aos::logging {
namespace {

// Deep-copies a table of the configuration schema's `object_name` into a
// finished buffer with `identifier`.
std::string CopyAsBuffer(const flatbuffers::Table& table,
                         std::string_view object_name, const char* identifier) {
  const reflection::Schema& schema = configuration::ConfigurationSchema();
  const reflection::Object* object =
      schema.objects()->LookupByKey(std::string(object_name).c_str());
  CHECK(object != nullptr) << "aos/configuration.fbs has no " << object_name;
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(CopyFlatbufferTable(&fbb, schema, *object, table), identifier);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

const flatbuffers::Table& AsTable(const void* table) {
  return *static_cast<const flatbuffers::Table*>(table);
}

uint64_t Nanoseconds(monotonic_clock::time_point time) {
  return time.time_since_epoch().count();
}
uint64_t Nanoseconds(realtime_clock::time_point time) {
  return time.time_since_epoch().count();
}

bool Lists(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* names,
    std::string_view name) {
  return names != nullptr &&
         std::ranges::any_of(*names, [name](const flatbuffers::String* each) {
           return StringView(each) == name;
         });
}

// Whether the log of `node` records `channel`, which is readable there, by
// its `logger` field (logger.h says the rule). An error for what AOS aborts
// on: a REMOTE kind in a config without nodes, or a value that is not a
// LoggerConfig.
absl::StatusOr<bool> LoggedOnNode(const Channel& channel, const Node* node) {
  const LoggerConfig logger = channel.logger();
  const auto channel_name = [&channel]() {
    return StrCat("channel ", StringView(channel.name()), " (type ",
                  StringView(channel.type()), ")");
  };
  switch (logger) {
    case LoggerConfig::NOT_LOGGED:
      return false;
    case LoggerConfig::LOCAL_LOGGER:
    case LoggerConfig::REMOTE_LOGGER:
    case LoggerConfig::LOCAL_AND_REMOTE_LOGGER:
      break;
    default:
      return absl::InvalidArgumentError(
          StrCat(channel_name(), ": logger ", static_cast<int>(logger),
                 " is not a LoggerConfig (LOCAL_LOGGER, REMOTE_LOGGER, "
                 "NOT_LOGGED or LOCAL_AND_REMOTE_LOGGER)"));
  }
  if (node == nullptr) {
    if (logger == LoggerConfig::LOCAL_LOGGER) return true;
    return absl::InvalidArgumentError(
        StrCat(channel_name(), ": logger ", EnumNameLoggerConfig(logger),
               " needs other nodes to log it, and this config has no nodes; "
               "use LOCAL_LOGGER or NOT_LOGGED"));
  }
  // Our logs are replayed one node at a time, so a node keeps what reaches
  // it (AOS's node would keep only the delivery times).
  if (configuration::ChannelIsForwardedTo(channel, node)) return true;
  return logger != LoggerConfig::REMOTE_LOGGER ||
         Lists(channel.logger_nodes(), StringView(node->name()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Logger>> Logger::Make(
    EventLoop* event_loop, std::unique_ptr<McapWriter> writer,
    LoggerOptions options) {
  std::unique_ptr<Logger> logger(new Logger(event_loop, std::move(writer)));
  if (absl::Status status = logger->WriteHeaderRecords(options); !status.ok()) {
    return status;
  }
  if (options.poll_period > monotonic_clock::duration::zero()) {
    for (const std::unique_ptr<RecordedChannel>& channel : logger->channels_) {
      channel->fetcher = event_loop->MakeRawFetcher(channel->channel);
    }
    PhasedLoopHandler* poll = event_loop->AddPhasedLoop(
        [self = logger.get()](int) { self->Poll(); }, options.poll_period);
    poll->set_name("poll");
  } else {
    for (const std::unique_ptr<RecordedChannel>& recorded : logger->channels_) {
      RecordedChannel* channel = recorded.get();
      Logger* self = logger.get();
      event_loop->MakeRawWatcher(
          channel->channel,
          [self, channel](const Context& context, const void*) {
            self->Record(channel, context);
          });
    }
  }
  TimerHandler* flush =
      event_loop->AddTimer([self = logger.get()]() { self->Flush(); });
  flush->set_name("flush");
  event_loop->OnRun([event_loop, flush, period = options.flush_period]() {
    flush->Schedule(event_loop->monotonic_now() + period, period);
  });
  return logger;
}

Logger::Logger(EventLoop* event_loop, std::unique_ptr<McapWriter> writer)
    : event_loop_(event_loop), writer_(std::move(writer)) {}

Logger::~Logger() {
  if (!finished_) {
    absl::Status status = Finish();
    LOG_IF(ERROR, !status.ok()) << status.message();
  }
}

absl::Status Logger::WriteHeaderRecords(const LoggerOptions& options) {
  const Configuration& config = *event_loop_->configuration();
  const Node* node = event_loop_->node();
  const uint64_t now = Nanoseconds(event_loop_->monotonic_now());

  // The configuration and the node first: a reader needs them to make
  // sense of anything else.
  absl::Status status = writer_->AddAttachment(
      kConfigAttachment, kConfigMediaType,
      CopyAsBuffer(AsTable(&config), "aos.Configuration", nullptr), now,
      Nanoseconds(event_loop_->realtime_now()));
  if (!status.ok()) return status;
  status = writer_->AddMetadata(
      kLoggerMetadata,
      {{std::string(kLoggerNode), node == nullptr
                                      ? std::string()
                                      : std::string(StringView(node->name()))},
       {std::string(kLoggerBootUuid), event_loop_->boot_uuid().ToString()}});
  if (!status.ok()) return status;

  std::map<std::string, uint16_t, std::less<>> schema_ids;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      if (!configuration::ChannelIsReadableOnNode(*channel, node)) continue;
      if (options.channel_filter && !options.channel_filter(*channel)) {
        continue;
      }
      const absl::StatusOr<bool> logged = LoggedOnNode(*channel, node);
      if (!logged.ok()) return logged.status();
      if (!*logged) continue;
      const std::string_view type = StringView(channel->type());
      auto schema = schema_ids.find(type);
      if (schema == schema_ids.end()) {
        uint16_t id = 0;
        if (channel->schema() != nullptr) {
          absl::StatusOr<uint16_t> added = writer_->AddSchema(
              type, kFlatbufferEncoding,
              CopyAsBuffer(AsTable(channel->schema()), "reflection.Schema",
                           reflection::SchemaIdentifier()));
          if (!added.ok()) return added.status();
          id = *added;
        } else {
          LOG(WARNING) << "the config has no schema for " << type
                       << "; its channels are logged without one (use a "
                          "config built by aos_config)";
        }
        schema = schema_ids.emplace(std::string(type), id).first;
      }
      std::map<std::string, std::string> metadata = {
          {std::string(kChannelType), std::string(type)}};
      const bool forwarded =
          configuration::ChannelIsForwardedTo(*channel, node);
      if (forwarded) {
        metadata.emplace(kChannelSourceNode,
                         std::string(StringView(channel->source_node())));
      }
      absl::StatusOr<uint16_t> id =
          writer_->AddChannel(schema->second, StringView(channel->name()),
                              kFlatbufferEncoding, metadata);
      if (!id.ok()) return id.status();
      auto recorded = std::make_unique<RecordedChannel>();
      recorded->channel = channel;
      recorded->mcap_id = *id;
      recorded->forwarded = forwarded;
      channels_.push_back(std::move(recorded));
    }
  }
  if (channels_.empty()) {
    return absl::InvalidArgumentError(
        StrCat("no channel of the config is readable on this node, logged "
               "here (its logger field) and selected, so there is nothing to "
               "log into ",
               writer_->path()));
  }
  if (absl::Status status = AddRemoteChannelIfForwarded(); !status.ok()) {
    return status;
  }
  return AddOriginsChannel();
}

absl::Status Logger::AddRemoteChannelIfForwarded() {
  if (std::ranges::none_of(
          channels_, [](const auto& channel) { return channel->forwarded; })) {
    return absl::OkStatus();
  }
  absl::StatusOr<uint16_t> schema = writer_->AddSchema(
      kRemoteMessageType, kFlatbufferEncoding, RemoteMessageSchema());
  if (!schema.ok()) return schema.status();
  absl::StatusOr<uint16_t> channel = writer_->AddChannel(
      *schema, kRemoteMessageTopic, kFlatbufferEncoding, {});
  if (!channel.ok()) return channel.status();
  remote_channel_id_ = *channel;
  // Grow the builder's buffer now rather than while recording.
  EncodeRemoteRecord({}, &remote_builder_);
  return absl::OkStatus();
}

absl::Status Logger::AddOriginsChannel() {
  absl::StatusOr<uint16_t> schema = writer_->AddSchema(
      kOriginsType, kFlatbufferEncoding, MessageOriginsSchema());
  if (!schema.ok()) return schema.status();
  absl::StatusOr<uint16_t> channel =
      writer_->AddChannel(*schema, kOriginsTopic, kFlatbufferEncoding, {});
  if (!channel.ok()) return channel.status();
  origins_channel_id_ = *channel;
  // Grow the builder's buffer to the largest record now rather than while
  // recording.
  PathOrigins most;
  for (uint32_t i = 1; i <= kMaxPathOrigins; ++i) {
    most.Add({.id = i, .hops = 1});
  }
  EncodeOriginsRecord(0, 0, most, &origins_builder_);
  return absl::OkStatus();
}

void Logger::Record(RecordedChannel* channel, const Context& context) {
  if (!status_.ok()) return;
  if (channel->last_queue_index != Context::kInvalidQueueIndex) {
    // Queue indexes count up by one per message (wrapping at 2^32): a
    // bigger step means messages were overwritten before we read them.
    const uint32_t missed = context.queue_index - channel->last_queue_index - 1;
    if (missed > 0) {
      LOG_IF(WARNING, channel->lost == 0)
          << "fell behind on " << StringView(channel->channel->name()) << " "
          << StringView(channel->channel->type()) << ": " << missed
          << " messages lost (counted in the log's " << kLostMetadata << ")";
      channel->lost += missed;
      lost_total_ += missed;
    }
  }
  channel->last_queue_index = context.queue_index;
  const uint64_t log_time = Nanoseconds(context.monotonic_event_time);
  const uint64_t publish_time = Nanoseconds(context.realtime_event_time);
  if (channel->forwarded) {
    // Just before the message, at the same time: log_format.h.
    const RemoteRecord record{.channel_id = channel->mcap_id,
                              .queue_index = context.queue_index,
                              .origin = RemoteOriginOf(context)};
    absl::Status status = writer_->WriteMessage(
        remote_channel_id_, static_cast<uint32_t>(remote_records_), log_time,
        publish_time, EncodeRemoteRecord(record, &remote_builder_));
    if (!status.ok()) {
      Fail(std::move(status));
      return;
    }
    ++remote_records_;
  }
  if (HasOriginsToRecord(context.origins)) {
    // Just before the message too (after its remote record): log_format.h.
    absl::Status status = writer_->WriteMessage(
        origins_channel_id_, static_cast<uint32_t>(origins_records_), log_time,
        publish_time,
        EncodeOriginsRecord(channel->mcap_id, context.queue_index,
                            context.origins, &origins_builder_));
    if (!status.ok()) {
      Fail(std::move(status));
      return;
    }
    ++origins_records_;
  }
  absl::Status status = writer_->WriteMessage(
      channel->mcap_id, context.queue_index, log_time, publish_time,
      std::string_view(static_cast<const char*>(context.data), context.size));
  if (!status.ok()) Fail(std::move(status));
}

void Logger::Poll() {
  // Every channel's next unrecorded message is its fetcher's current one
  // (after a FetchNext); record the earliest, advance that fetcher, until
  // all are drained: a merge in send order, as watchers would deliver.
  for (const std::unique_ptr<RecordedChannel>& channel : channels_) {
    if (!channel->pending) channel->pending = channel->fetcher->FetchNext();
  }
  while (status_.ok()) {
    RecordedChannel* earliest = nullptr;
    for (const std::unique_ptr<RecordedChannel>& channel : channels_) {
      if (!channel->pending) continue;
      if (earliest == nullptr ||
          channel->fetcher->context().monotonic_event_time <
              earliest->fetcher->context().monotonic_event_time) {
        earliest = channel.get();
      }
    }
    if (earliest == nullptr) return;
    Record(earliest, earliest->fetcher->context());
    earliest->pending = earliest->fetcher->FetchNext();
  }
}

void Logger::Flush() {
  if (!status_.ok()) return;
  absl::Status status = WriteLostCounts();
  if (status.ok()) status = writer_->Flush();
  if (!status.ok()) Fail(std::move(status));
}

absl::Status Logger::WriteLostCounts() {
  if (lost_total_ == lost_written_) return absl::OkStatus();
  std::map<std::string, std::string> counts;
  for (const std::unique_ptr<RecordedChannel>& channel : channels_) {
    if (channel->lost == 0) continue;
    counts.emplace(StrCat(StringView(channel->channel->name()), " ",
                          StringView(channel->channel->type())),
                   std::to_string(channel->lost));
  }
  lost_written_ = lost_total_;
  return writer_->AddMetadata(kLostMetadata, counts);
}

void Logger::Fail(absl::Status status) {
  LOG(ERROR) << status.message();
  status_ = std::move(status);
  event_loop_->Exit();
}

absl::Status Logger::Finish() {
  finished_ = true;
  // What was sent since the last poll.
  if (!channels_.empty() && channels_.front()->fetcher != nullptr) Poll();
  if (status_.ok()) status_ = WriteLostCounts();
  absl::Status closed = writer_->Close();
  if (status_.ok()) status_ = closed;
  return status_;
}

}  // namespace aos::logging
