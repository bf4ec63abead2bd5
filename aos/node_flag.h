#ifndef AOS_NODE_FLAG_H_
#define AOS_NODE_FLAG_H_

// The --node flag of every aos program that runs as one node of a
// multi-node configuration (ping, pong, aos_dump, message_bridge):
//
//   auto node = aos::ReadNodeFlag(config.message());
//   if (!node.ok()) aos::ExitForUserError(node.status().message());
//   aos::ShmEventLoop loop(&config.message(), "ping", *node);
//
// (aos_timing_report_streamer is the exception: its --node only filters
// which node's reports it shows.)

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration.h"
#include "gflags/gflags.h"

DECLARE_string(node);

namespace aos {

// This machine's hostname (gethostname), or "" if it cannot be read.
std::string ThisHostname();

// The node of `config` a program runs as, given the value of its --node flag
// and the machine's hostname:
// - a single-node config (no nodes): null; `node_flag` must be empty;
// - a multi-node config: the node `node_flag` names; if it is empty, the one
//   node whose hostname is `hostname`.
// Errors are one line that names --node and lists the config's nodes.
[[nodiscard]] absl::StatusOr<const Node*> ResolveNode(
    const Configuration& config, std::string_view node_flag,
    std::string_view hostname);

// ResolveNode(config, --node, ThisHostname()).
[[nodiscard]] absl::StatusOr<const Node*> ReadNodeFlag(
    const Configuration& config);

}  // namespace aos

#endif  // AOS_NODE_FLAG_H_
