#include "aos/configuration_lookup.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "aos/configuration_maps.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

std::string NodeName(const Node* node) {
  return node == nullptr ? "(no node)" : std::string(StringView(node->name()));
}

}  // namespace

std::string MapChannelName(const Configuration& config, std::string_view name,
                           std::string_view type,
                           std::string_view application_name,
                           const Node* node) {
  const std::vector<MapStep> chain =
      MapChain(config, name, type, application_name, node);
  return chain.empty() ? std::string(name) : chain.back().name;
}

bool MultiNode(const Configuration& config) {
  return config.nodes() != nullptr && config.nodes()->size() > 0;
}

const Node* GetNode(const Configuration& config, std::string_view name) {
  if (config.nodes() == nullptr) return nullptr;
  for (const Node* node : *config.nodes()) {
    if (StringView(node->name()) == name) return node;
  }
  return nullptr;
}

const Channel* GetChannel(const Configuration& config, std::string_view name,
                          std::string_view type,
                          std::string_view application_name, const Node* node,
                          std::string* why_not, ChannelAccess access) {
  auto fail = [&](std::string reason) -> const Channel* {
    if (why_not != nullptr) *why_not = std::move(reason);
    return nullptr;
  };
  const std::string mapped =
      MapChannelName(config, name, type, application_name, node);
  // Names in messages are escaped and bounded: they may come from a flag or
  // a file.
  const auto shown = [](std::string_view text) {
    return InlinePrintable(text);
  };
  const std::string asked =
      mapped == name ? StrCat("channel ", shown(name), " of type ", shown(type))
                     : StrCat("channel ", shown(name), " (mapped to ",
                              shown(mapped), ") of type ", shown(type));
  const std::string who = StrCat("application ", shown(application_name),
                                 " on node ", shown(NodeName(node)));

  if (MultiNode(config) && node == nullptr) {
    return fail(StrCat(asked, " for ", who,
                       ": this is a multi-node config; name the node"));
  }
  if (!MultiNode(config) && node != nullptr) {
    return fail(StrCat(asked, " for ", who,
                       ": this config has no nodes; pass no node"));
  }

  const Channel* found = nullptr;
  if (config.channels() != nullptr) {
    // Channels are sorted by (name, type).
    const auto* channels = config.channels();
    auto it = std::lower_bound(
        channels->begin(), channels->end(), std::make_pair(mapped, type),
        [](const Channel* channel,
           const std::pair<std::string, std::string_view>& key) {
          return std::make_pair(StringView(channel->name()),
                                StringView(channel->type())) <
                 std::make_pair(std::string_view(key.first), key.second);
        });
    if (it != channels->end() && StringView(it->name()) == mapped &&
        StringView(it->type()) == type) {
      found = *it;
    }
  }
  if (found == nullptr) {
    return fail(StrCat(asked, " is not in the config (asked by ", who, ")"));
  }

  if (access == ChannelAccess::kExists) return found;
  if (node != nullptr) {
    const std::string_view node_name = StringView(node->name());
    const bool readable = ChannelIsReadableOnNode(*found, node);
    if (access == ChannelAccess::kSend &&
        StringView(found->source_node()) != node_name) {
      return fail(StrCat(asked, " cannot be sent on node ", shown(node_name),
                         " (asked by ", who, "): only its source_node ",
                         shown(StringView(found->source_node())),
                         " sends on it"));
    }
    if (!readable) {
      std::vector<std::string> destinations;
      if (found->destination_nodes() != nullptr) {
        for (const Connection* connection : *found->destination_nodes()) {
          destinations.push_back(shown(StringView(connection->name())));
        }
      }
      return fail(StrCat(
          asked, " is not readable on node ", shown(node_name), " (asked by ",
          who, "): its source_node is ",
          shown(StringView(found->source_node())),
          destinations.empty()
              ? std::string(" and it goes nowhere else")
              : StrCat(" and it goes to ", StrJoin(destinations, ", "))));
    }
    const Application* application = GetApplication(config, application_name);
    if (application != nullptr && !ApplicationRunsOn(*application, node_name)) {
      return fail(StrCat(asked, ": application ", shown(application_name),
                         " is not configured to run on node ",
                         shown(node_name)));
    }
  }
  return found;
}

namespace {

// Levenshtein distance; names are short.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string DescribeClosestChannels(const Configuration& config,
                                    std::string_view name,
                                    std::string_view type, size_t limit) {
  struct Candidate {
    size_t score;
    const Channel* channel;
  };
  std::vector<Candidate> candidates;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      const size_t name_distance =
          EditDistance(StringView(channel->name()), name);
      const bool same_type = StringView(channel->type()) == type;
      const bool close_name =
          name_distance <= std::max<size_t>(2, name.size() / 3);
      if (!same_type && !close_name) continue;
      candidates.push_back(
          {name_distance +
               (same_type
                    ? 0
                    : 1 + EditDistance(StringView(channel->type()), type) / 4),
           channel});
    }
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  if (candidates.empty()) {
    return StrCat("no channel of the config has a similar name or type ",
                  InlinePrintable(type));
  }
  std::string result = "closest channels in the config:";
  for (size_t i = 0; i < candidates.size() && i < limit; ++i) {
    StrAppend(&result, "\n  ",
              InlinePrintable(StringView(candidates[i].channel->name())), " (",
              InlinePrintable(StringView(candidates[i].channel->type())), ")");
  }
  return result;
}

size_t MessageBufferSize(const Channel& channel) {
  const size_t max_size =
      static_cast<size_t>(std::max<int32_t>(0, channel.max_size()));
  return (max_size + 7) & ~size_t{7};
}

int64_t ChannelStorageDurationNs(const Configuration& config,
                                 const Channel& channel) {
  if (flatbuffers::IsFieldPresent(&channel,
                                  Channel::VT_CHANNEL_STORAGE_DURATION)) {
    return channel.channel_storage_duration();
  }
  return config.channel_storage_duration();
}

uint64_t ChannelQueueMessages(const Configuration& config,
                              const Channel& channel) {
  const unsigned __int128 frequency =
      static_cast<uint64_t>(std::max(0, channel.frequency()));
  const unsigned __int128 storage_ns = static_cast<uint64_t>(
      std::max<int64_t>(0, ChannelStorageDurationNs(config, channel)));
  const unsigned __int128 messages =
      (frequency * storage_ns + 999999999u) / 1000000000u;
  return static_cast<uint64_t>(
      std::min<unsigned __int128>(messages, UINT64_MAX));
}

uint32_t ChannelQueueSize(const Configuration& config, const Channel& channel) {
  return static_cast<uint32_t>(std::clamp<uint64_t>(
      ChannelQueueMessages(config, channel), 1, UINT32_MAX));
}

namespace {

// True if `node_name` is one of `channel`'s destination_nodes.
bool IsDestination(const Channel& channel, std::string_view node_name) {
  if (channel.destination_nodes() == nullptr) return false;
  for (const Connection* connection : *channel.destination_nodes()) {
    if (StringView(connection->name()) == node_name) return true;
  }
  return false;
}

}  // namespace

bool ChannelIsReadableOnNode(const Channel& channel, const Node* node) {
  if (node == nullptr) return true;
  const std::string_view name = StringView(node->name());
  return StringView(channel.source_node()) == name ||
         IsDestination(channel, name);
}

bool ChannelIsForwardedTo(const Channel& channel, const Node* node) {
  if (node == nullptr) return false;
  const std::string_view name = StringView(node->name());
  return StringView(channel.source_node()) != name &&
         IsDestination(channel, name);
}

}  // namespace aos::configuration
