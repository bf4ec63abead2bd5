#include "aos/tools/node_channels.h"

#include <algorithm>

#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos {
absl::StatusOr<std::vector<NodeChannel>> ChannelOnEachNode(
    const Configuration& config, std::string_view name, std::string_view type,
    std::string_view application, std::string_view only_node) {
  std::vector<NodeChannel> result;
  if (!configuration::MultiNode(config)) {
    if (!only_node.empty()) {
      return absl::InvalidArgumentError(
          StrCat("--node=", only_node,
                 ": the configuration has no nodes; drop --node"));
    }
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        config, name, type, application, nullptr, &why_not);
    if (channel == nullptr) return absl::NotFoundError(why_not);
    result.push_back({"", channel});
    return result;
  }
  std::vector<std::string_view> names;
  for (const Node* node : *config.nodes()) {
    names.push_back(StringView(node->name()));
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
  if (!only_node.empty() &&
      configuration::GetNode(config, only_node) == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("--node=", only_node, " is not a node of the configuration; ",
               "its nodes: ", StrJoin(names, ", ")));
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
