#ifndef AOS_CONFIGURATION_MAPS_H_
#define AOS_CONFIGURATION_MAPS_H_

// How maps rename channels; shared by lookup and validation. See
// MapChannelName in aos/configuration.h for the rules.

#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration_generated.h"

namespace aos::configuration {

// One rename: the map applied and the name it produced.
struct MapStep {
  const Map* map;
  std::string name;
};

// Applies the maps an application sees, one rename at a time, until none
// matches or a name comes back. Returns the renames in order (empty when no
// map matches). Sets `*looped` (if given) when a name repeated; the chain
// then ends with the repeated name.
std::vector<MapStep> MapChain(const Configuration& config,
                              std::string_view name, std::string_view type,
                              std::string_view application_name,
                              const Node* node, bool* looped = nullptr);

// The application entry called `name`, or null.
const Application* GetApplication(const Configuration& config,
                                  std::string_view name);

// Whether `application` runs on the node called `node_name`: it lists that
// node among its nodes, or lists none (then it runs on every node).
bool ApplicationRunsOn(const Application& application,
                       std::string_view node_name);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_MAPS_H_
