#include "aos/configuration_maps.h"

#include <algorithm>
#include <optional>

#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

// The name `map` turns `name` into, or nullopt if it does not apply.
std::optional<std::string> ApplyMap(const Map& map, std::string_view name,
                                    std::string_view type, const Node* node) {
  if (map.match() == nullptr || map.rename() == nullptr ||
      map.match()->name() == nullptr || map.rename()->name() == nullptr) {
    return std::nullopt;
  }
  const Channel& match = *map.match();
  if (match.type() != nullptr && StringView(match.type()) != type)
    return std::nullopt;
  if (match.source_node() != nullptr &&
      (node == nullptr ||
       StringView(node->name()) != StringView(match.source_node()))) {
    return std::nullopt;
  }
  const std::string_view match_name = StringView(match.name());
  const std::string_view rename = StringView(map.rename()->name());
  if (match_name.ends_with("*")) {
    const std::string_view prefix = match_name.substr(0, match_name.size() - 1);
    if (!name.starts_with(prefix)) return std::nullopt;
    return StrCat(rename, name.substr(prefix.size()));
  }
  if (match_name != name) return std::nullopt;
  return std::string(rename);
}

// The last map of `maps` that applies, with what it produces.
std::optional<MapStep> LastMatch(
    const flatbuffers::Vector<flatbuffers::Offset<Map>>* maps,
    std::string_view name, std::string_view type, const Node* node) {
  if (maps == nullptr) return std::nullopt;
  for (size_t i = maps->size(); i > 0; --i) {
    const Map* map = maps->Get(i - 1);
    if (std::optional<std::string> renamed = ApplyMap(*map, name, type, node)) {
      return MapStep{map, std::move(*renamed)};
    }
  }
  return std::nullopt;
}

}  // namespace

const Application* GetApplication(const Configuration& config,
                                  std::string_view name) {
  if (config.applications() == nullptr) return nullptr;
  for (const Application* application : *config.applications()) {
    if (StringView(application->name()) == name) return application;
  }
  return nullptr;
}

bool ApplicationRunsOn(const Application& application,
                       std::string_view node_name) {
  if (application.nodes() == nullptr || application.nodes()->size() == 0) {
    return true;
  }
  for (const flatbuffers::String* node : *application.nodes()) {
    if (node->string_view() == node_name) return true;
  }
  return false;
}

std::vector<MapStep> MapChain(const Configuration& config,
                              std::string_view name, std::string_view type,
                              std::string_view application_name,
                              const Node* node, bool* looped) {
  if (looped != nullptr) *looped = false;
  const Application* application = GetApplication(config, application_name);
  // Each rename uses one map; a chain longer than the maps there are means a
  // map keeps matching its own output (e.g. "/camera*" -> "/camera/front"),
  // which never repeats a name but never ends either.
  const size_t map_count =
      (config.maps() == nullptr ? 0 : config.maps()->size()) +
      (application == nullptr || application->maps() == nullptr
           ? 0
           : application->maps()->size());
  std::vector<MapStep> chain;
  std::vector<std::string> seen = {std::string(name)};
  std::string current(name);
  while (true) {
    if (chain.size() > map_count) {
      if (looped != nullptr) *looped = true;
      return chain;
    }
    std::optional<MapStep> step;
    if (application != nullptr) {
      step = LastMatch(application->maps(), current, type, node);
    }
    if (!step) step = LastMatch(config.maps(), current, type, node);
    if (!step || step->name == current) return chain;
    current = step->name;
    chain.push_back(std::move(*step));
    if (std::find(seen.begin(), seen.end(), current) != seen.end()) {
      if (looped != nullptr) *looped = true;
      return chain;
    }
    seen.push_back(current);
  }
}

}  // namespace aos::configuration
