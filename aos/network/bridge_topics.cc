#include "aos/network/bridge_topics.h"

#include <algorithm>

#include "aos/configuration_lookup.h"
#include "aos/flatbuffer_string_view.h"

namespace aos::message_bridge {

int32_t QueueDepth(const Configuration& config, const Channel& channel) {
  const int64_t storage_ns =
      configuration::ChannelStorageDurationNs(config, channel);
  const int64_t depth =
      static_cast<int64_t>(channel.frequency()) * storage_ns / 1000000000;
  return static_cast<int32_t>(std::clamp<int64_t>(depth, 1, 10000));
}

ForwardedTopic ForwardedChannelTopic(const Configuration& config,
                                     const Channel& channel,
                                     uint32_t channel_index) {
  bool reliable = false;
  int64_t lifespan_ns = 0;
  for (const Connection* connection : *channel.destination_nodes()) {
    if (connection->time_to_live() == 0) reliable = true;
    lifespan_ns = std::max<int64_t>(lifespan_ns, connection->time_to_live());
  }
  return ForwardedTopic{
      .name =
          DdsParticipant::TopicName(channel_index, StringView(channel.name()),
                                    StringView(channel.type())),
      .qos = DdsParticipant::Qos{.reliable = reliable,
                                 .depth = QueueDepth(config, channel),
                                 .lifespan_ns = reliable ? 0 : lifespan_ns}};
}

}  // namespace aos::message_bridge
