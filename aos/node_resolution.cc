#include "aos/node_resolution.h"

#include <limits.h>
#include <unistd.h>

#include <vector>

#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

std::string NodeNames(const Configuration& config) {
  std::vector<std::string_view> names;
  for (const Node* node : *config.nodes())
    names.push_back(StringView(node->name()));
  return StrJoin(names, ", ");
}

// Whether `hostname` is the node's hostname or one of its hostnames.
bool HasHostname(const Node& node, std::string_view hostname) {
  if (StringView(node.hostname()) == hostname) return true;
  if (node.hostnames() == nullptr) return false;
  for (const flatbuffers::String* name : *node.hostnames()) {
    if (name->string_view() == hostname) return true;
  }
  return false;
}

}  // namespace

std::string ThisHostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

absl::StatusOr<const Node*> ResolveNode(const Configuration& config,
                                        std::string_view node_flag,
                                        std::string_view hostname) {
  if (!configuration::MultiNode(config)) {
    if (node_flag.empty()) return nullptr;
    return absl::InvalidArgumentError(StrCat(
        "--node=", node_flag, ": the configuration has no nodes; drop --node"));
  }
  if (!node_flag.empty()) {
    const Node* node = configuration::GetNode(config, node_flag);
    if (node != nullptr) return node;
    return absl::InvalidArgumentError(
        StrCat("--node=", node_flag, " is not a node of the configuration; ",
               "its nodes: ", NodeNames(config)));
  }
  const Node* match = nullptr;
  for (const Node* node : *config.nodes()) {
    if (hostname.empty() || !HasHostname(*node, hostname)) continue;
    if (match != nullptr) {
      return absl::InvalidArgumentError(StrCat(
          "--node: nodes ", StringView(match->name()), " and ",
          StringView(node->name()), " both have this machine's hostname \"",
          hostname, "\"; pass --node=NAME"));
    }
    match = node;
  }
  if (match != nullptr) return match;
  return absl::InvalidArgumentError(
      StrCat("--node: no node of the configuration has this machine's "
             "hostname \"",
             hostname, "\"; pass --node=NAME, one of: ", NodeNames(config)));
}

}  // namespace aos
