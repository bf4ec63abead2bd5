#include "aos/events/logging/origins_record.h"

#include <algorithm>
#include <array>

#include "aos/events/logging/message_origins_bfbs_generated.h"
#include "aos/events/logging/message_origins_generated.h"

namespace aos::logging {

// The record's struct is the origin as messages carry it, byte for byte.
static_assert(sizeof(Origin) == sizeof(PathOrigin));

std::string_view EncodeOriginsRecord(uint16_t channel_id, uint32_t queue_index,
                                     const PathOrigins& origins,
                                     flatbuffers::FlatBufferBuilder* fbb) {
  fbb->Clear();
  std::array<Origin, kMaxPathOrigins> entries;
  size_t count = 0;
  for (const PathOrigin& origin : origins) {
    entries[count++] = Origin(origin.id, origin.hops, origin.uncertainty_us,
                              origin.monotonic_time_ns);
  }
  const auto vector = fbb->CreateVectorOfStructs(entries.data(), count);
  MessageOriginsBuilder builder(*fbb);
  builder.add_channel_id(channel_id);
  builder.add_queue_index(queue_index);
  builder.add_origins(vector);
  builder.add_dropped(origins.dropped());
  fbb->Finish(builder.Finish());
  return std::string_view(
      reinterpret_cast<const char*>(fbb->GetBufferPointer()), fbb->GetSize());
}

std::optional<OriginsRecord> DecodeOriginsRecord(std::string_view data) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  flatbuffers::Verifier verifier(bytes, data.size());
  if (!verifier.VerifyBuffer<MessageOrigins>(nullptr)) return std::nullopt;
  const MessageOrigins* message = flatbuffers::GetRoot<MessageOrigins>(bytes);
  if (!message->channel_id().has_value() ||
      !message->queue_index().has_value() || message->origins() == nullptr ||
      !message->dropped().has_value()) {
    return std::nullopt;
  }
  OriginsRecord record;
  record.channel_id = *message->channel_id();
  record.queue_index = *message->queue_index();
  record.origins.count = message->origins()->size();
  record.origins.dropped = *message->dropped();
  const size_t kept =
      std::min<size_t>(message->origins()->size(), kMaxPathOrigins);
  for (size_t i = 0; i < kept; ++i) {
    const Origin* origin = message->origins()->Get(i);
    record.origins.origins[i] =
        PathOrigin{.id = origin->id(),
                   .hops = origin->hops(),
                   .uncertainty_us = origin->uncertainty_us(),
                   .monotonic_time_ns = origin->monotonic_time()};
  }
  return record;
}

std::string_view MessageOriginsSchema() {
  return std::string_view(
      reinterpret_cast<const char*>(MessageOriginsBinarySchema::data()),
      MessageOriginsBinarySchema::size());
}

}  // namespace aos::logging
