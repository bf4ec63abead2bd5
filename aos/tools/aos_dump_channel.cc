#include "aos/tools/aos_dump_channel.h"

#include <map>
#include <vector>

#include "aos/configuration_lookup.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// At most this many channels are listed in a message.
constexpr size_t kMaxListedChannels = 50;

// `described`, comma separated, at most kMaxListedChannels of them.
std::string ListSome(const std::vector<std::string>& described) {
  if (described.size() <= kMaxListedChannels) return StrJoin(described, ", ");
  return StrCat(
      StrJoin(std::vector<std::string>(described.begin(),
                                       described.begin() + kMaxListedChannels),
              ", "),
      " and ", described.size() - kMaxListedChannels, " more");
}

std::string List(const std::vector<const Channel*>& channels) {
  std::vector<std::string> described;
  for (const Channel* channel : channels) {
    described.push_back(DescribeDumpChannel(*channel));
  }
  return ListSome(described);
}

// DescribeClosestChannels' lines ("closest channels in the config:\n
// /test (T)\n...") as one line.
std::string ClosestOnOneLine(const Configuration& config, std::string_view name,
                             std::string_view type) {
  const std::string closest =
      configuration::DescribeClosestChannels(config, name, type);
  std::string one_line;
  size_t start = 0;
  while (start < closest.size()) {
    size_t end = closest.find('\n', start);
    if (end == std::string::npos) end = closest.size();
    std::string_view part(closest.data() + start, end - start);
    start = end + 1;
    while (part.starts_with(' ')) part.remove_prefix(1);
    while (part.ends_with(' ')) part.remove_suffix(1);
    if (part.empty()) continue;
    if (!one_line.empty()) one_line += one_line.ends_with(':') ? " " : ", ";
    one_line += part;
  }
  return one_line;
}

std::string NodeName(const Node* node) {
  return InlinePrintable(node->name()->string_view());
}

// The channels `name` maps to on `node`: maps depend on the type, so each
// type's mapped name is worked out once.
std::vector<const Channel*> ChannelsNamed(const Configuration& config,
                                          std::string_view name,
                                          const Node* node) {
  std::vector<const Channel*> named;
  if (config.channels() == nullptr) return named;
  std::map<std::string_view, std::string> mapped;
  for (const Channel* channel : *config.channels()) {
    const std::string_view type = channel->type()->string_view();
    auto it = mapped.find(type);
    if (it == mapped.end()) {
      it = mapped
               .emplace(type, configuration::MapChannelName(config, name, type,
                                                            "", node))
               .first;
    }
    if (channel->name()->string_view() == it->second) {
      named.push_back(channel);
    }
  }
  return named;
}

// AOS's type rule: the exact type if a channel has it, else every type
// containing `type`.
std::vector<const Channel*> OfType(const std::vector<const Channel*>& channels,
                                   std::string_view type) {
  std::vector<const Channel*> exact;
  std::vector<const Channel*> containing;
  for (const Channel* channel : channels) {
    const std::string_view each = channel->type()->string_view();
    if (each == type) exact.push_back(channel);
    if (each.find(type) != std::string_view::npos) {
      containing.push_back(channel);
    }
  }
  return exact.empty() ? containing : exact;
}

absl::Status NotFound(const Configuration& config, std::string_view name,
                      std::string_view type, const Node* node,
                      const std::vector<const Channel*>& named) {
  const std::string shown_name = InlinePrintable(name);
  const std::string shown_type = InlinePrintable(type);
  std::string message =
      StrCat("no channel ", shown_name, type.empty() ? "" : " of type ",
             type.empty() ? "" : shown_type, " in the config");
  StrAppend(&message, named.empty()
                          ? std::string("; no channel has that name")
                          : StrCat("; named ", shown_name, ": ", List(named)));
  if (!type.empty()) {
    std::vector<const Channel*> of_type;
    if (config.channels() != nullptr) {
      for (const Channel* channel : *config.channels()) {
        if (channel->type()->string_view().find(type) !=
            std::string_view::npos) {
          of_type.push_back(channel);
        }
      }
    }
    StrAppend(&message, of_type.empty()
                            ? std::string("; no channel has that type")
                            : StrCat("; of type ", shown_type, ": ",
                                     List(OfType(of_type, type))));
  }
  if (named.empty()) {
    const std::string mapped =
        configuration::MapChannelName(config, name, type, "", node);
    if (mapped != name) {
      StrAppend(&message, "; ",
                node == nullptr
                    ? std::string("the maps make it ")
                    : StrCat("on node ", NodeName(node), " the maps make it "),
                InlinePrintable(mapped));
    }
    StrAppend(&message, "; ", ClosestOnOneLine(config, mapped, type));
  }
  return absl::NotFoundError(message);
}

// Exactly one channel of the name and type, whatever the node may do with
// it.
absl::StatusOr<const Channel*> FindOne(const Configuration& config,
                                       std::string_view name,
                                       std::string_view type,
                                       const Node* node) {
  const std::vector<const Channel*> named = ChannelsNamed(config, name, node);
  const std::vector<const Channel*> matches = OfType(named, type);
  if (matches.empty()) return NotFound(config, name, type, node, named);
  if (matches.size() > 1) {
    const std::string shown_name = InlinePrintable(name);
    if (type.empty()) {
      return absl::InvalidArgumentError(
          StrCat("several channels are named ", shown_name,
                 "; add the type: ", List(matches)));
    }
    return absl::InvalidArgumentError(StrCat(
        "several channels named ", shown_name, " have a type containing ",
        InlinePrintable(type), "; give more of the type: ", List(matches)));
  }
  return matches.front();
}

std::string SourceNodeName(const Channel& channel) {
  return InlinePrintable(channel.source_node() == nullptr
                             ? std::string_view()
                             : channel.source_node()->string_view());
}

absl::Status NotReadable(const Channel& channel, const Node* node) {
  return absl::InvalidArgumentError(
      StrCat(DescribeDumpChannel(channel), " is not readable on node ",
             NodeName(node), ": it is sent on ", SourceNodeName(channel),
             " and not forwarded to ", NodeName(node)));
}

}  // namespace

std::string DescribeDumpChannel(const Channel& channel) {
  return StrCat(InlinePrintable(channel.name()->string_view()), " ",
                InlinePrintable(channel.type()->string_view()));
}

std::string ListDumpChannels(const Configuration& config) {
  std::vector<const Channel*> channels;
  if (config.channels() != nullptr) {
    channels.assign(config.channels()->begin(), config.channels()->end());
  }
  return channels.empty() ? std::string("the config has no channel")
                          : StrCat("channels of the config: ", List(channels));
}

absl::StatusOr<const Channel*> FindDumpChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type,
                                               const Node* node) {
  absl::StatusOr<const Channel*> channel = FindOne(config, name, type, node);
  if (!channel.ok()) return channel;
  if (!configuration::ChannelIsReadableOnNode(**channel, node)) {
    return NotReadable(**channel, node);
  }
  return channel;
}

absl::StatusOr<std::vector<const Channel*>> FindDumpChannels(
    const Configuration& config, std::string_view name, std::string_view type,
    const Node* node) {
  if (!type.empty()) {
    absl::StatusOr<const Channel*> channel =
        FindDumpChannel(config, name, type, node);
    if (!channel.ok()) return channel.status();
    return std::vector<const Channel*>{*channel};
  }
  const std::vector<const Channel*> named = ChannelsNamed(config, name, node);
  if (named.empty()) return NotFound(config, name, type, node, named);
  std::vector<const Channel*> readable;
  for (const Channel* channel : named) {
    if (configuration::ChannelIsReadableOnNode(*channel, node)) {
      readable.push_back(channel);
    }
  }
  if (readable.empty()) return NotReadable(*named.front(), node);
  return readable;
}

absl::StatusOr<const Channel*> FindSendChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type,
                                               const Node* node) {
  absl::StatusOr<const Channel*> channel = FindOne(config, name, type, node);
  if (!channel.ok()) return channel;
  if (node != nullptr && ((*channel)->source_node() == nullptr ||
                          (*channel)->source_node()->string_view() !=
                              node->name()->string_view())) {
    return absl::InvalidArgumentError(
        StrCat(DescribeDumpChannel(**channel), " is not sendable on node ",
               NodeName(node), ": ",
               (*channel)->source_node() == nullptr
                   ? std::string("it has no source_node")
                   : StrCat("only its source node, ", SourceNodeName(**channel),
                            ", sends it (aos_send there, with --node=",
                            SourceNodeName(**channel), ")")));
  }
  return channel;
}

std::string NameTheConfig(std::string_view error,
                          std::string_view config_flag) {
  if (!config_flag.empty()) {
    return StrCat(error, " (--config=", InlinePrintable(config_flag), ")");
  }
  return StrCat(error,
                "; the config is the built-in aos/aos.json (only /aos), as no "
                "--config was given: give your system's, e.g. "
                "--config=bazel-bin/examples/pingpong_config.json");
}

}  // namespace aos
