#ifndef AOS_CONFIGURATION_LOOKUP_H_
#define AOS_CONFIGURATION_LOOKUP_H_

// Querying a flattened configuration (aos/configuration.h reads one): the
// channel an application gets for a name after maps and node rules, nodes,
// storage durations, and the channels closest to a mistyped name.
//
//   const aos::Channel* ping = aos::configuration::GetChannel(
//       config, "/test", "aos.examples.Ping", "ping", nullptr, &why_not);
//
// Nothing here is for the realtime path: it allocates.

#include <cstdint>
#include <string>
#include <string_view>

#include "aos/configuration_generated.h"

namespace aos::configuration {

// True if the configuration names nodes (a multi-node system).
bool MultiNode(const Configuration& config);

// The node called `name`, or null.
const Node* GetNode(const Configuration& config, std::string_view name);

// The name an application gets when it asks for channel `name` of `type` on
// `node` (null in a single-node config): maps are applied, the
// application's own first, then the configuration's; in each list the last
// matching map wins; the result is mapped again until no map matches. A map
// matches when its match name equals the name (or, ending in '*', is a prefix
// of it), its match type (if set) equals `type`, and its match source_node
// (if set) is `node`'s name.
std::string MapChannelName(const Configuration& config, std::string_view name,
                           std::string_view type,
                           std::string_view application_name, const Node* node);

// What an application wants to do with a channel.
enum class ChannelAccess {
  kRead,
  kSend,
  // Only whether it is in the config (after maps), whatever nodes may read
  // or send it: AOS's EventLoop::GetChannel.
  kExists,
};

// The channel an application called `application_name` gets when it asks for
// (`name`, `type`) on `node`, after maps (MapChannelName) and node rules: in
// a multi-node config `node` must be given, the channel must be readable on
// it (it is the source_node or a destination), and if the application is
// listed with nodes, `node` must be one of them; to send (kSend), `node`
// must be the channel's source_node; kExists skips these node rules.
// Returns null when there is
// no such channel, and then, if `why_not` is given, sets it to a sentence
// naming the channel, type, application and node and saying why.
// Cost: O(log channels) after mapping; mapping scans the application's and
// the config's maps once per rename (about 9 ns a map: 86 us with 10,000
// maps, tools/bench/config_scale_benchmark).
const Channel* GetChannel(const Configuration& config, std::string_view name,
                          std::string_view type,
                          std::string_view application_name, const Node* node,
                          std::string* why_not = nullptr,
                          ChannelAccess access = ChannelAccess::kRead);

// Up to `limit` channels of the config most like (`name`, `type`), best
// first, as lines "  /name (type)": same type or a name a few edits away,
// e.g. for "channel /tset of type T is not in the config" messages. Says so
// when nothing is close.
std::string DescribeClosestChannels(const Configuration& config,
                                    std::string_view name,
                                    std::string_view type, size_t limit = 5);

// True if messages of `channel` reach `node`: it is the channel's
// source_node or one of its destination_nodes. Every channel is readable
// in a single-node system (null `node`).
bool ChannelIsReadableOnNode(const Channel& channel, const Node* node);

// True if `channel` is sent on another node and forwarded to `node` (one
// of its destination_nodes): the message bridge re-sends its messages
// there. False in a single-node system (null `node`).
bool ChannelIsForwardedTo(const Channel& channel, const Node* node);

// The bytes a sender's buffer and a queue slot of `channel` hold: max_size
// rounded up to a multiple of 8. A message is built backwards from the end
// of its buffer, so this end must be 8-byte aligned for flatbuffers (AOS
// accepts any positive max_size and aligns the same way). Messages stay
// limited to max_size itself.
size_t MessageBufferSize(const Channel& channel);

// How long messages of `channel` are kept: its channel_storage_duration if
// set, else the configuration's.
int64_t ChannelStorageDurationNs(const Configuration& config,
                                 const Channel& channel);

// ceil(frequency x storage duration) of `channel`, in exact integer
// arithmetic (a negative frequency or duration counts as 0), at most
// UINT64_MAX: the messages its queue must hold, unbounded, as validation
// checks them against a queue's 32-bit index.
uint64_t ChannelQueueMessages(const Configuration& config,
                              const Channel& channel);

// How many messages `channel` holds: ChannelQueueMessages, at least 1 and
// at most UINT32_MAX. A send is refused as too
// fast while the message this many sends back is younger than the
// storage duration. Shared memory and the simulation size their queues
// with it.
uint32_t ChannelQueueSize(const Configuration& config, const Channel& channel);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_LOOKUP_H_
