#include "aos/node_flag.h"

#include <limits.h>
#include <unistd.h>

#include <vector>

#include "aos/util/str_cat.h"

DEFINE_string(node, "",
              "The node of a multi-node configuration this program runs as "
              "(default: the node whose hostname is this machine's).");

namespace aos {
namespace {

std::string_view View(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

std::string NodeNames(const Configuration& config) {
  std::vector<std::string_view> names;
  for (const Node* node : *config.nodes()) names.push_back(View(node->name()));
  return StrJoin(names, ", ");
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
    if (hostname.empty() || View(node->hostname()) != hostname) continue;
    if (match != nullptr) {
      return absl::InvalidArgumentError(
          StrCat("--node: nodes ", View(match->name()), " and ",
                 View(node->name()), " both have this machine's hostname \"",
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

absl::StatusOr<const Node*> ReadNodeFlag(const Configuration& config) {
  return ResolveNode(config, FLAGS_node, ThisHostname());
}

}  // namespace aos
