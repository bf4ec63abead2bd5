#ifndef AOS_NODE_FLAG_H_
#define AOS_NODE_FLAG_H_

// The --node flag of every aos program that runs as one node of a
// multi-node configuration (ping, pong, aos_dump, aos_logger,
// message_bridge):
//
//   auto node = aos::ReadNodeFlag(config.message());
//   if (!node.ok()) aos::ExitForUserError(node.status().message());
//   aos::ShmEventLoop loop(&config.message(), "ping", *node);
//
// (aos_timing_report_streamer is the exception: its --node only filters
// which node's reports it shows, checked with ResolveNode.)

#include "absl/status/statusor.h"
#include "aos/configuration.h"
#include "aos/node_resolution.h"
#include "gflags/gflags.h"

DECLARE_string(node);

namespace aos {

// ResolveNode(config, --node, ThisHostname()).
[[nodiscard]] absl::StatusOr<const Node*> ReadNodeFlag(
    const Configuration& config);

}  // namespace aos

#endif  // AOS_NODE_FLAG_H_
