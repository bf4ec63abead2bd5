#include "aos/configuration_validation.h"

#include <set>
#include <string_view>

#include "aos/configuration.h"
#include "aos/configuration_maps.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

// Flatbuffer alignment: the largest scalar a message may hold is 8 bytes, so
// queues hand out 8-byte aligned slots of max_size bytes.
constexpr int kMaxSizeAlignment = 8;

std::string_view View(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

std::string Describe(const Channel& channel) {
  return StrCat("channel \"", View(channel.name()), "\" (type ",
                View(channel.type()), ")");
}

std::string NodeList(const Configuration& config) {
  if (!MultiNode(config)) return "it has no nodes";
  std::vector<std::string_view> names;
  for (const Node* node : *config.nodes()) names.push_back(View(node->name()));
  return StrCat("its nodes are ", StrJoin(names, ", "));
}

absl::Status Invalid(std::string_view files, std::string message) {
  return absl::InvalidArgumentError(StrCat(files, ": ", message));
}

absl::Status ValidateNodes(const Configuration& config,
                           const ConfigSources& sources) {
  if (config.nodes() == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < config.nodes()->size(); ++i) {
    const Node& node = *config.nodes()->Get(i);
    if (View(node.name()).empty()) {
      return Invalid(sources.node_files[i],
                     StrCat("node #", i, " has no name"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (View(config.nodes()->Get(j)->name()) == View(node.name())) {
        return Invalid(
            sources.node_files[i],
            StrCat("duplicate node \"", View(node.name()),
                   "\" (first defined in ", sources.node_files[j], ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateChannel(const Configuration& config,
                             const Channel& channel, std::string_view files) {
  const std::string what = Describe(channel);
  const std::string_view name = View(channel.name());
  if (name.empty() || name[0] != '/') {
    return Invalid(files, StrCat(what, ": name must start with '/'"));
  }
  if (channel.max_size() <= 0 || channel.max_size() % kMaxSizeAlignment != 0) {
    return Invalid(files, StrCat(what, ": max_size ", channel.max_size(),
                                 " must be a positive multiple of ",
                                 kMaxSizeAlignment, " (flatbuffer alignment)"));
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
  if (channel.source_node() != nullptr &&
      GetNode(config, View(channel.source_node())) == nullptr) {
    return Invalid(
        files,
        StrCat(what, ": source_node \"", View(channel.source_node()),
               "\" is not a node of this config (", NodeList(config), ")"));
  }
  if (MultiNode(config) && channel.source_node() == nullptr) {
    return Invalid(files, StrCat(what,
                                 ": a multi-node config needs a source_node on "
                                 "every channel (",
                                 NodeList(config), ")"));
  }
  if (channel.destination_nodes() != nullptr) {
    for (const Connection* connection : *channel.destination_nodes()) {
      if (GetNode(config, View(connection->name())) == nullptr) {
        return Invalid(files, StrCat(what, ": destination_nodes names \"",
                                     View(connection->name()),
                                     "\", which is not a node of this "
                                     "config (",
                                     NodeList(config), ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMap(const Map& map, std::string_view files,
                         std::string_view owner) {
  if (map.match() == nullptr || View(map.match()->name()).empty()) {
    return Invalid(files, StrCat(owner, " has a map without match.name"));
  }
  if (map.rename() == nullptr || View(map.rename()->name()).empty()) {
    return Invalid(files, StrCat(owner, " maps \"", View(map.match()->name()),
                                 "\" without rename.name"));
  }
  return absl::OkStatus();
}

// Follows every map from its own match name, as each application and node
// would see it, and fails if renaming never settles.
absl::Status ValidateMapLoops(const Configuration& config,
                              const ConfigSources& sources) {
  std::vector<std::string_view> applications = {""};
  if (config.applications() != nullptr) {
    for (const Application* application : *config.applications()) {
      applications.push_back(View(application->name()));
    }
  }
  std::vector<const Node*> nodes = {nullptr};
  if (config.nodes() != nullptr) {
    for (const Node* node : *config.nodes()) nodes.push_back(node);
  }
  std::vector<std::pair<const Map*, std::string>> maps;
  if (config.maps() != nullptr) {
    for (size_t i = 0; i < config.maps()->size(); ++i) {
      maps.emplace_back(config.maps()->Get(i), sources.map_files[i]);
    }
  }
  if (config.applications() != nullptr) {
    for (size_t i = 0; i < config.applications()->size(); ++i) {
      const Application* application = config.applications()->Get(i);
      if (application->maps() == nullptr) continue;
      for (const Map* map : *application->maps()) {
        maps.emplace_back(map, sources.application_files[i]);
      }
    }
  }
  for (const auto& [map, file] : maps) {
    std::string start(View(map->match()->name()));
    if (!start.empty() && start.back() == '*') start.pop_back();
    const std::string_view type = View(map->match()->type());
    for (std::string_view application : applications) {
      for (const Node* node : nodes) {
        bool looped = false;
        const std::vector<MapStep> chain =
            MapChain(config, start, type, application, node, &looped);
        if (!looped) continue;
        std::vector<std::string> names = {start};
        for (const MapStep& step : chain) names.push_back(step.name);
        return Invalid(
            file, StrCat("maps loop: ", StrJoin(names, " -> "),
                         application.empty()
                             ? std::string()
                             : StrCat(" (for application ", application, ")"),
                         node == nullptr
                             ? std::string()
                             : StrCat(" (on node ", View(node->name()), ")")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

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
  if (config.channels() != nullptr) {
    for (size_t i = 0; i < config.channels()->size(); ++i) {
      if (absl::Status status = ValidateChannel(
              config, *config.channels()->Get(i), sources.channel_files[i]);
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
      const std::string owner =
          StrCat("application \"", View(application.name()), "\"");
      if (application.maps() != nullptr) {
        for (const Map* map : *application.maps()) {
          if (absl::Status status =
                  ValidateMap(*map, sources.application_files[i], owner);
              !status.ok()) {
            return status;
          }
        }
      }
      if (application.nodes() != nullptr) {
        for (const flatbuffers::String* node : *application.nodes()) {
          if (GetNode(config, node->string_view()) == nullptr) {
            return Invalid(
                sources.application_files[i],
                StrCat(owner, ": nodes names \"", node->string_view(),
                       "\", which is not a node of this config (",
                       NodeList(config), ")"));
          }
        }
      }
    }
  }
  return ValidateMapLoops(config, sources);
}

}  // namespace aos::configuration
