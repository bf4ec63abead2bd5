#include "aos/network/forwarded_message_check.h"

#include "aos/configuration_lookup.h"
#include "aos/util/str_cat.h"
#include "flatbuffers/reflection.h"

namespace aos::message_bridge {
namespace {

std::string Describe(const Channel& channel) {
  return StrCat(channel.name()->string_view(), " (",
                channel.type()->string_view(), ")");
}

// Index of `name` in the config's nodes, or -1.
int NodeIndex(const Configuration& config, std::string_view name) {
  if (config.nodes() == nullptr) return -1;
  for (flatbuffers::uoffset_t i = 0; i < config.nodes()->size(); ++i) {
    const Node* node = config.nodes()->Get(i);
    if (node->name() != nullptr && node->name()->string_view() == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

absl::StatusOr<ForwardedMessageCheck> ForwardedMessageCheck::Make(
    const Configuration& config, const Channel& channel, const Node& node) {
  int channel_index = -1;
  for (flatbuffers::uoffset_t i = 0;
       config.channels() != nullptr && i < config.channels()->size(); ++i) {
    if (config.channels()->Get(i) == &channel) {
      channel_index = static_cast<int>(i);
    }
  }
  if (channel_index < 0) {
    return absl::InvalidArgumentError(
        StrCat("channel ", Describe(channel), " is not in the configuration"));
  }
  if (channel.schema() == nullptr ||
      channel.schema()->root_table() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("channel ", Describe(channel),
               " has no schema in the configuration, so messages forwarded "
               "on it cannot be verified; use a configuration flattened by "
               "aos_config (it embeds every channel's schema)"));
  }
  const std::string_view node_name =
      node.name() != nullptr ? node.name()->string_view() : "";
  if (!configuration::ChannelIsForwardedTo(channel, &node)) {
    return absl::InvalidArgumentError(StrCat("channel ", Describe(channel),
                                             " is not forwarded to node ",
                                             node_name));
  }
  const int source =
      channel.source_node() == nullptr
          ? -1
          : NodeIndex(config, channel.source_node()->string_view());
  if (source < 0) {
    return absl::InvalidArgumentError(
        StrCat("channel ", Describe(channel),
               " is forwarded but its source_node is not a node of the "
               "configuration"));
  }
  return ForwardedMessageCheck(&channel, static_cast<uint32_t>(channel_index),
                               static_cast<uint32_t>(source));
}

ForwardedVerdict ForwardedMessageCheck::Check(uint32_t channel_index,
                                              uint32_t source_node,
                                              const uint8_t* data,
                                              size_t size) const {
  if (channel_index != channel_index_ || source_node != source_node_index_) {
    return ForwardedVerdict::kUnknownChannel;
  }
  if (size > static_cast<size_t>(channel_->max_size())) {
    return ForwardedVerdict::kOversize;
  }
  const reflection::Schema& schema = *channel_->schema();
  if (size == 0 || data == nullptr ||
      !flatbuffers::Verify(schema, *schema.root_table(), data, size)) {
    return ForwardedVerdict::kInvalid;
  }
  return ForwardedVerdict::kOk;
}

const char* VerdictName(ForwardedVerdict verdict) {
  switch (verdict) {
    case ForwardedVerdict::kOk:
      return "ok";
    case ForwardedVerdict::kUnknownChannel:
      return "unknown channel";
    case ForwardedVerdict::kOversize:
      return "oversize";
    case ForwardedVerdict::kInvalid:
      return "invalid";
  }
  return "?";
}

}  // namespace aos::message_bridge
