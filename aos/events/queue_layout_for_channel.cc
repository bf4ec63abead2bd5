#include "aos/events/queue_layout_for_channel.h"

#include <algorithm>
#include <cstdint>

#include "aos/configuration_lookup.h"

namespace aos {

ipc_lib::QueueLayout QueueLayoutForChannel(const Configuration& config,
                                           const Channel& channel) {
  ipc_lib::QueueLayout layout;
  layout.message_data_size =
      static_cast<uint32_t>(configuration::MessageBufferSize(channel));
  layout.channel_storage_duration_ns =
      configuration::ChannelStorageDurationNs(config, channel);
  // ceil(frequency * storage seconds), in integers: exact, no overflow.
  const unsigned __int128 frequency =
      static_cast<uint64_t>(std::max(0, channel.frequency()));
  const unsigned __int128 storage_ns = static_cast<uint64_t>(
      std::max<int64_t>(0, layout.channel_storage_duration_ns));
  const unsigned __int128 messages =
      (frequency * storage_ns + 999999999u) / 1000000000u;
  layout.queue_size = static_cast<uint32_t>(
      std::clamp<unsigned __int128>(messages, 1, UINT32_MAX));
  layout.num_senders =
      static_cast<uint32_t>(std::max(0, channel.num_senders()));
  layout.num_watchers =
      static_cast<uint32_t>(std::max(0, channel.num_watchers()));
  return layout;
}

}  // namespace aos
