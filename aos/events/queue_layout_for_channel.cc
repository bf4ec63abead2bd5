#include "aos/events/queue_layout_for_channel.h"

#include <algorithm>

#include "aos/configuration_lookup.h"

namespace aos {

ipc_lib::QueueLayout QueueLayoutForChannel(const Configuration& config,
                                           const Channel& channel) {
  ipc_lib::QueueLayout layout;
  layout.message_data_size =
      static_cast<uint32_t>(configuration::MessageBufferSize(channel));
  layout.channel_storage_duration_ns =
      configuration::ChannelStorageDurationNs(config, channel);
  layout.queue_size = configuration::ChannelQueueSize(config, channel);
  layout.num_senders =
      static_cast<uint32_t>(std::max(0, channel.num_senders()));
  layout.num_watchers =
      static_cast<uint32_t>(std::max(0, channel.num_watchers()));
  return layout;
}

}  // namespace aos
