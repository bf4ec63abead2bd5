#include "aos/node_flag.h"

DEFINE_string(node, "",
              "The node of a multi-node configuration this program runs as "
              "(default: the node whose hostname is this machine's).");

namespace aos {

absl::StatusOr<const Node*> ReadNodeFlag(const Configuration& config) {
  return ResolveNode(config, FLAGS_node, ThisHostname());
}

}  // namespace aos
