#ifndef AOS_TOOLS_NODE_CHANNELS_H_
#define AOS_TOOLS_NODE_CHANNELS_H_

// The copies of one logical channel that every node of a configuration has:
// in AOS's multi-node configs, "/aos" is mapped to "/pi1/aos" on pi1 and
// "/pi2/aos" on pi2, and each is forwarded to the other nodes. A tool that
// shows every node's timing reports watches all of them.
//
//   auto channels = ChannelOnEachNode(config, "/aos", "aos.timing.Report",
//                                     "aos_timing_report_streamer", "");
//   for (const NodeChannel& c : *channels) loop.MakeRawWatcher(c.channel, ...);

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration.h"

namespace aos {

// One node's copy of a channel.
struct NodeChannel {
  // The node that sends on it (its source_node); "" in a single-node config.
  std::string node;
  const Channel* channel = nullptr;
};

// (`name`, `type`) as `application` sees it on each node of `config`, or only
// on node `only_node` if that is not empty; each distinct channel once, in
// the config's node order. Nodes whose mapped name has no channel of `type`
// are left out. A single-node config gives its one channel.
// Errors (one line): `only_node` is not a node of the config (or the config
// has none), or no node has the channel.
[[nodiscard]] absl::StatusOr<std::vector<NodeChannel>> ChannelOnEachNode(
    const Configuration& config, std::string_view name, std::string_view type,
    std::string_view application, std::string_view only_node);

}  // namespace aos

#endif  // AOS_TOOLS_NODE_CHANNELS_H_
