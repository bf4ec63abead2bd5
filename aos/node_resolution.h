#ifndef AOS_NODE_RESOLUTION_H_
#define AOS_NODE_RESOLUTION_H_

// Which node of a configuration a program is, from a node name (its --node
// flag) and the machine's hostname. aos/node_flag.h applies it to the
// shared --node flag; tools whose --node means something else (the
// streamer's filter) use it directly to check a name.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration.h"

namespace aos {

// This machine's hostname (gethostname), or "" if it cannot be read.
std::string ThisHostname();

// The node of `config` a program runs as, given the value of its --node flag
// and the machine's hostname:
// - a single-node config (no nodes): null; `node_flag` must be empty;
// - a multi-node config: the node `node_flag` names; if it is empty, the one
//   node whose hostname (or one of whose hostnames) is `hostname`.
// Errors are one line that names --node and lists the config's nodes.
[[nodiscard]] absl::StatusOr<const Node*> ResolveNode(
    const Configuration& config, std::string_view node_flag,
    std::string_view hostname);

}  // namespace aos

#endif  // AOS_NODE_RESOLUTION_H_
