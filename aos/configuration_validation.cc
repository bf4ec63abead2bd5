#include "aos/configuration_validation.h"

#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "aos/configuration.h"
#include "aos/configuration_map_loops.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

// At most this many node names are listed in a message.
constexpr size_t kMaxListedNodes = 20;

using StringVector =
    flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;

// Names from a config file in messages: quoted, escaped and bounded
// (aos::Printable), so a name of a megabyte is not echoed whole.
std::string Quoted(std::string_view name) { return Printable(name); }

std::string Describe(const Channel& channel) {
  return StrCat("channel ", Quoted(StringView(channel.name())), " (type ",
                InlinePrintable(StringView(channel.type())), ")");
}

absl::Status Invalid(std::string_view files, std::string message) {
  return absl::InvalidArgumentError(StrCat(files, ": ", message));
}

// Why `name` cannot name a channel (AOS's rules), or empty.
std::string ChannelNameProblem(std::string_view name) {
  if (name.empty() || name.front() != '/') return "name must start with '/'";
  if (name.back() == '/') {
    return "name must not end with '/'";
  }
  if (name.find("//") != std::string_view::npos) {
    return "name must not contain \"//\"";
  }
  for (const char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                         c == '/';
    if (!allowed) {
      // The character escaped if it is not printable ("\x1b").
      const std::string shown = Printable(std::string_view(&c, 1));
      return StrCat("name may only use the characters [-a-zA-Z0-9_/], not '",
                    std::string_view(shown).substr(1, shown.size() - 2), "'");
    }
  }
  return "";
}

// The first name that `names` lists twice, or empty.
std::string_view Duplicate(const StringVector* names) {
  if (names == nullptr) return "";
  std::unordered_set<std::string_view> seen;
  for (const flatbuffers::String* name : *names) {
    if (!seen.insert(name->string_view()).second) return name->string_view();
  }
  return "";
}

// Checks that need only the channel itself; run on every file and on the
// merged config.
absl::Status ValidateChannelAlone(const Channel& channel,
                                  std::string_view files) {
  const std::string what = Describe(channel);
  if (channel.name() == nullptr) {
    return Invalid(files, StrCat("a channel of type ",
                                 InlinePrintable(StringView(channel.type())),
                                 " has no name"));
  }
  if (StringView(channel.type()).empty()) {
    return Invalid(files, StrCat("channel ", Quoted(StringView(channel.name())),
                                 " has no type"));
  }
  if (const std::string problem =
          ChannelNameProblem(StringView(channel.name()));
      !problem.empty()) {
    return Invalid(files, StrCat(what, ": ", problem));
  }
  if (const std::string_view twice = Duplicate(channel.logger_nodes());
      !twice.empty()) {
    return Invalid(
        files, StrCat(what, ": logger_nodes lists ", Quoted(twice), " twice"));
  }
  if (channel.destination_nodes() == nullptr) return absl::OkStatus();
  for (const Connection* connection : *channel.destination_nodes()) {
    if (const std::string_view twice =
            Duplicate(connection->timestamp_logger_nodes());
        !twice.empty()) {
      return Invalid(
          files,
          StrCat(what, ": destination ", Quoted(StringView(connection->name())),
                 " lists ", Quoted(twice), " twice in timestamp_logger_nodes"));
    }
    // AOS's rule: delivery timestamps are useless without the messages.
    if (channel.logger() == LoggerConfig::NOT_LOGGED &&
        connection->timestamp_logger() != LoggerConfig::NOT_LOGGED) {
      return Invalid(
          files, StrCat(what, ": logger is NOT_LOGGED, but destination ",
                        Quoted(StringView(connection->name())),
                        " logs delivery timestamps (timestamp_logger ",
                        EnumNameLoggerConfig(connection->timestamp_logger()),
                        "); set it to NOT_LOGGED too"));
    }
  }
  return absl::OkStatus();
}

// The nodes of a config, by name, for checks that name them.
class NodeNames {
 public:
  explicit NodeNames(const Configuration& config) {
    if (config.nodes() == nullptr) return;
    size_t listed = 0;
    for (const Node* node : *config.nodes()) {
      by_name_.emplace(StringView(node->name()), node);
      if (++listed > kMaxListedNodes) continue;
      if (!list_.empty()) list_ += ", ";
      list_ += InlinePrintable(StringView(node->name()));
    }
  }

  bool multi_node() const { return !by_name_.empty(); }
  const Node* Find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  // "its nodes are pi1, pi2", for messages.
  std::string List() const {
    if (!multi_node()) return "it has no nodes";
    return by_name_.size() > kMaxListedNodes
               ? StrCat("its nodes are ", list_, " and ",
                        by_name_.size() - kMaxListedNodes, " more")
               : StrCat("its nodes are ", list_);
  }
  // "`field` names "x", which is not a node of this config (...)", or empty
  // when every name is a node.
  std::string Unknown(std::string_view field, const StringVector* names) const {
    if (names == nullptr) return "";
    for (const flatbuffers::String* name : *names) {
      if (Find(name->string_view()) == nullptr) {
        return StrCat(field, " names ", Quoted(name->string_view()),
                      ", which is not a node of this config (", List(), ")");
      }
    }
    return "";
  }

 private:
  std::unordered_map<std::string_view, const Node*> by_name_;
  std::string list_;
};

absl::Status ValidateNodes(const Configuration& config,
                           const ConfigSources& sources) {
  if (config.nodes() == nullptr) return absl::OkStatus();
  // "host:port" -> the node that listens there.
  std::unordered_map<std::string, size_t> addresses;
  for (size_t i = 0; i < config.nodes()->size(); ++i) {
    const Node& node = *config.nodes()->Get(i);
    if (StringView(node.name()).empty()) {
      return Invalid(sources.node_files[i],
                     StrCat("node #", i, " has no name"));
    }
    std::set<std::string_view> hosts;
    if (!StringView(node.hostname()).empty())
      hosts.insert(StringView(node.hostname()));
    if (node.hostnames() != nullptr) {
      for (const flatbuffers::String* host : *node.hostnames()) {
        hosts.insert(host->string_view());
      }
    }
    for (std::string_view host : hosts) {
      const std::string address = StrCat(host, ":", node.port());
      auto [it, inserted] = addresses.emplace(address, i);
      if (!inserted) {
        const Node& other = *config.nodes()->Get(it->second);
        return Invalid(
            StrCat(sources.node_files[it->second] == sources.node_files[i]
                       ? sources.node_files[i]
                       : StrCat(sources.node_files[it->second], ", ",
                                sources.node_files[i])),
            StrCat("nodes ", Quoted(StringView(other.name())), " and ",
                   Quoted(StringView(node.name())), " are both at ",
                   InlinePrintable(address),
                   " (hostname and port must tell nodes apart)"));
      }
    }
  }
  return absl::OkStatus();
}

// The checks on one merged channel that involve nodes.
absl::Status ValidateChannelNodes(const Channel& channel,
                                  std::string_view files,
                                  const NodeNames& nodes) {
  // As in AOS, a config without nodes ignores the node fields.
  if (!nodes.multi_node()) return absl::OkStatus();
  const std::string what = Describe(channel);
  if (channel.source_node() == nullptr) {
    return Invalid(files, StrCat(what,
                                 ": a multi-node config needs a source_node "
                                 "on every channel (",
                                 nodes.List(), ")"));
  }
  const std::string_view source_name = StringView(channel.source_node());
  const Node* source = nodes.Find(source_name);
  if (source == nullptr) {
    return Invalid(
        files, StrCat(what, ": source_node ", Quoted(source_name),
                      " is not a node of this config (", nodes.List(), ")"));
  }
  if (const std::string unknown =
          nodes.Unknown("logger_nodes", channel.logger_nodes());
      !unknown.empty()) {
    return Invalid(files, StrCat(what, ": ", unknown));
  }
  if (channel.destination_nodes() == nullptr) return absl::OkStatus();
  for (const Connection* connection : *channel.destination_nodes()) {
    const std::string_view name = StringView(connection->name());
    const Node* destination = nodes.Find(name);
    if (destination == nullptr) {
      return Invalid(
          files,
          StrCat(what, ": destination_nodes names ", Quoted(name),
                 ", which is not a node of this config (", nodes.List(), ")"));
    }
    if (destination == source) {
      return Invalid(files, StrCat(what, ": forwarded to its own source_node ",
                                   Quoted(name)));
    }
    const std::string destination_what =
        StrCat(what, ": destination ", Quoted(name));
    switch (connection->timestamp_logger()) {
      case LoggerConfig::LOCAL_LOGGER:
      case LoggerConfig::NOT_LOGGED:
        if (connection->timestamp_logger_nodes() != nullptr &&
            connection->timestamp_logger_nodes()->size() > 0) {
          return Invalid(
              files,
              StrCat(destination_what,
                     " has timestamp_logger_nodes, but "
                     "timestamp_logger ",
                     EnumNameLoggerConfig(connection->timestamp_logger()),
                     " uses none (REMOTE_LOGGER or LOCAL_AND_REMOTE_LOGGER "
                     "do)"));
        }
        break;
      case LoggerConfig::REMOTE_LOGGER:
      case LoggerConfig::LOCAL_AND_REMOTE_LOGGER:
        if (connection->timestamp_logger_nodes() == nullptr ||
            connection->timestamp_logger_nodes()->size() == 0) {
          return Invalid(
              files,
              StrCat(destination_what, ": timestamp_logger ",
                     EnumNameLoggerConfig(connection->timestamp_logger()),
                     " needs timestamp_logger_nodes"));
        }
        break;
    }
    if (const std::string unknown = nodes.Unknown(
            "timestamp_logger_nodes", connection->timestamp_logger_nodes());
        !unknown.empty()) {
      return Invalid(files, StrCat(destination_what, ": ", unknown));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateChannel(const Configuration& config,
                             const Channel& channel, std::string_view files) {
  if (absl::Status status = ValidateChannelAlone(channel, files);
      !status.ok()) {
    return status;
  }
  const std::string what = Describe(channel);
  if (channel.max_size() <= 0) {
    return Invalid(files, StrCat(what, ": max_size ", channel.max_size(),
                                 " must be positive (bytes)"));
  }
  if (channel.frequency() <= 0) {
    return Invalid(files, StrCat(what, ": frequency ", channel.frequency(),
                                 " must be positive (messages/second)"));
  }
  if (ChannelStorageDurationNs(config, channel) <= 0) {
    return Invalid(files, StrCat(what, ": channel_storage_duration ",
                                 ChannelStorageDurationNs(config, channel),
                                 " must be positive (nanoseconds)"));
  }
  if (channel.num_senders() <= 0) {
    return Invalid(files, StrCat(what, ": num_senders ", channel.num_senders(),
                                 " must be positive"));
  }
  if (channel.num_watchers() < 0 || channel.num_readers() < 0) {
    return Invalid(files, StrCat(what,
                                 ": num_watchers and num_readers must not be "
                                 "negative"));
  }
  // AOS's bound: a queue's messages, with a slot for each sender and reader,
  // must fit its 32-bit index. (The shared-memory queue here holds at most
  // 2^20 - 1; it says so when the channel is opened.)
  const uint64_t scratch = static_cast<uint64_t>(channel.num_senders()) +
                           static_cast<uint64_t>(channel.num_readers());
  if (static_cast<unsigned __int128>(ChannelQueueMessages(config, channel)) +
          scratch >=
      UINT32_MAX) {
    return Invalid(files,
                   StrCat(what, ": frequency ", channel.frequency(), " for ",
                          ChannelStorageDurationNs(config, channel),
                          " ns is more messages than a queue can hold"));
  }
  return absl::OkStatus();
}

absl::Status ValidateMap(const Map& map, std::string_view files,
                         std::string_view owner) {
  if (map.match() == nullptr || StringView(map.match()->name()).empty()) {
    return Invalid(files, StrCat(owner, " has a map without match.name"));
  }
  const std::string_view match = StringView(map.match()->name());
  if (map.rename() == nullptr || StringView(map.rename()->name()).empty()) {
    return Invalid(
        files, StrCat(owner, " maps ", Quoted(match), " without rename.name"));
  }
  if (const size_t star = match.find('*');
      star != std::string_view::npos && star + 1 != match.size()) {
    return Invalid(files, StrCat(owner, " maps ", Quoted(match),
                                 ": '*' may only end a match name"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfigFile(const Configuration& config,
                                std::string_view path) {
  if (config.channels() == nullptr) return absl::OkStatus();
  for (const Channel* channel : *config.channels()) {
    if (absl::Status status = ValidateChannelAlone(*channel, path);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateConfiguration(const Configuration& config,
                                   const ConfigSources& sources) {
  if (absl::Status status = ValidateNodes(config, sources); !status.ok()) {
    return status;
  }
  if (config.channel_storage_duration() <= 0) {
    return Invalid(
        sources.root_file,
        StrCat("channel_storage_duration ", config.channel_storage_duration(),
               " must be positive (nanoseconds)"));
  }
  const NodeNames nodes(config);
  if (config.channels() != nullptr) {
    for (size_t i = 0; i < config.channels()->size(); ++i) {
      const Channel& channel = *config.channels()->Get(i);
      if (absl::Status status =
              ValidateChannel(config, channel, sources.channel_files[i]);
          !status.ok()) {
        return status;
      }
      if (absl::Status status =
              ValidateChannelNodes(channel, sources.channel_files[i], nodes);
          !status.ok()) {
        return status;
      }
    }
  }
  if (config.maps() != nullptr) {
    for (size_t i = 0; i < config.maps()->size(); ++i) {
      if (absl::Status status = ValidateMap(*config.maps()->Get(i),
                                            sources.map_files[i], "the config");
          !status.ok()) {
        return status;
      }
    }
  }
  if (config.applications() != nullptr) {
    for (size_t i = 0; i < config.applications()->size(); ++i) {
      const Application& application = *config.applications()->Get(i);
      if (StringView(application.name()).empty()) {
        return Invalid(sources.application_files[i],
                       "an application has no name");
      }
      const std::string owner =
          StrCat("application ", Quoted(StringView(application.name())));
      if (application.maps() != nullptr) {
        for (const Map* map : *application.maps()) {
          if (absl::Status status =
                  ValidateMap(*map, sources.application_files[i], owner);
              !status.ok()) {
            return status;
          }
        }
      }
      if (nodes.multi_node()) {
        if (const std::string unknown =
                nodes.Unknown("nodes", application.nodes());
            !unknown.empty()) {
          return Invalid(sources.application_files[i],
                         StrCat(owner, ": ", unknown));
        }
      }
    }
  }
  return ValidateMapLoops(config, sources);
}

}  // namespace aos::configuration
