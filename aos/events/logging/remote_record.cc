#include "aos/events/logging/remote_record.h"

#include "aos/events/logging/remote_message_bfbs_generated.h"
#include "aos/events/logging/remote_message_generated.h"

namespace aos::logging {

RemoteOrigin RemoteOriginOf(const Context& context) {
  return RemoteOrigin{.monotonic_remote_time = context.monotonic_remote_time,
                      .realtime_remote_time = context.realtime_remote_time,
                      .remote_queue_index = context.remote_queue_index,
                      .source_boot_uuid = context.source_boot_uuid};
}

std::string_view EncodeRemoteRecord(const RemoteRecord& record,
                                    flatbuffers::FlatBufferBuilder* fbb) {
  fbb->Clear();
  const std::array<uint8_t, 16>& boot = record.origin.source_boot_uuid.bytes();
  const auto boot_offset = fbb->CreateVector(boot.data(), boot.size());
  RemoteMessageBuilder builder(*fbb);
  builder.add_channel_id(record.channel_id);
  builder.add_queue_index(record.queue_index);
  builder.add_monotonic_remote_time(
      record.origin.monotonic_remote_time.time_since_epoch().count());
  builder.add_realtime_remote_time(
      record.origin.realtime_remote_time.time_since_epoch().count());
  builder.add_remote_queue_index(record.origin.remote_queue_index);
  builder.add_source_boot_uuid(boot_offset);
  fbb->Finish(builder.Finish());
  return std::string_view(
      reinterpret_cast<const char*>(fbb->GetBufferPointer()), fbb->GetSize());
}

std::optional<RemoteRecord> DecodeRemoteRecord(std::string_view data) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  flatbuffers::Verifier verifier(bytes, data.size());
  if (!verifier.VerifyBuffer<RemoteMessage>(nullptr)) return std::nullopt;
  const RemoteMessage* message = flatbuffers::GetRoot<RemoteMessage>(bytes);
  if (!message->channel_id().has_value() ||
      !message->queue_index().has_value() ||
      !message->monotonic_remote_time().has_value() ||
      !message->realtime_remote_time().has_value() ||
      !message->remote_queue_index().has_value() ||
      message->source_boot_uuid() == nullptr ||
      message->source_boot_uuid()->size() != 16) {
    return std::nullopt;
  }
  RemoteRecord record;
  record.channel_id = *message->channel_id();
  record.queue_index = *message->queue_index();
  record.origin.monotonic_remote_time = monotonic_clock::time_point(
      monotonic_clock::duration(*message->monotonic_remote_time()));
  record.origin.realtime_remote_time = realtime_clock::time_point(
      realtime_clock::duration(*message->realtime_remote_time()));
  record.origin.remote_queue_index = *message->remote_queue_index();
  record.origin.source_boot_uuid =
      UUID::FromBytes(message->source_boot_uuid()->data());
  return record;
}

std::string_view RemoteMessageSchema() {
  return std::string_view(
      reinterpret_cast<const char*>(RemoteMessageBinarySchema::data()),
      RemoteMessageBinarySchema::size());
}

}  // namespace aos::logging
