#ifndef AOS_NETWORK_BRIDGE_TOPICS_H_
#define AOS_NETWORK_BRIDGE_TOPICS_H_

// The DDS topic a forwarded channel crosses on, and its quality of service:
// the source's writer (bridge_sender.h) and every destination's reader
// (bridge_receiver.h) are made from the same ForwardedTopic, so they always
// agree. One topic carries a channel to all its destinations, so the
// quality of service is the channel's, not each connection's: reliable if
// any connection has time_to_live 0, else best effort with the longest
// time_to_live as its lifespan; its history as deep as the channel's queue.
//
//   const ForwardedTopic topic = ForwardedChannelTopic(config, *channel, i);
//   dds->MakeWriter(&aos_bridge_Message_desc, topic.name, topic.qos, ...);

#include <cstdint>
#include <string>

#include "aos/configuration_generated.h"
#include "aos/network/dds_participant.h"

namespace aos::message_bridge {

struct ForwardedTopic {
  // DdsParticipant::TopicName of the channel.
  std::string name;
  DdsParticipant::Qos qos;
};

// The topic of `channel`, the channel at `channel_index` of `config`, which
// has destination_nodes.
ForwardedTopic ForwardedChannelTopic(const Configuration& config,
                                     const Channel& channel,
                                     uint32_t channel_index);

// Messages of `channel` kept in its queue (1 to 10000): its frequency
// times its storage duration.
int32_t QueueDepth(const Configuration& config, const Channel& channel);

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_TOPICS_H_
