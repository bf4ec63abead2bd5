#include "aos/tools/node_channels.h"

#include <algorithm>

#include "aos/flatbuffer_string_view.h"
#include "aos/node_resolution.h"
#include "aos/util/str_cat.h"

namespace aos {
absl::StatusOr<std::vector<NodeChannel>> ChannelOnEachNode(
    const Configuration& config, std::string_view name, std::string_view type,
    std::string_view application, std::string_view only_node) {
  std::vector<NodeChannel> result;
  if (!only_node.empty()) {
    // The name is checked as every program's --node is (no hostname
    // default: an empty name means every node here).
    if (absl::StatusOr<const Node*> node = ResolveNode(config, only_node, "");
        !node.ok()) {
      return node.status();
    }
  }
  if (!configuration::MultiNode(config)) {
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        config, name, type, application, nullptr, &why_not);
    if (channel == nullptr) return absl::NotFoundError(why_not);
    result.push_back({"", channel});
    return result;
  }
  for (const Node* node : *config.nodes()) {
    if (!only_node.empty() && StringView(node->name()) != only_node) continue;
    const Channel* channel =
        configuration::GetChannel(config, name, type, application, node);
    if (channel == nullptr) continue;
    const bool seen =
        std::any_of(result.begin(), result.end(),
                    [&](const NodeChannel& c) { return c.channel == channel; });
    if (!seen) {
      result.push_back(
          {std::string(StringView(channel->source_node())), channel});
    }
  }
  if (result.empty()) {
    return absl::NotFoundError(StrCat(
        "no node ",
        only_node.empty() ? std::string("")
                          : StrCat("(of --node=", only_node, ") "),
        "has a channel ", name, " of type ", type, " for ", application));
  }
  return result;
}

}  // namespace aos
