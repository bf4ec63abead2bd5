#ifndef AOS_TOOLS_NODE_SUMMARY_H_
#define AOS_TOOLS_NODE_SUMMARY_H_

// One node of a multi-node configuration as people check it: what it sends
// (and to whom, reliably or best effort), what it receives from other
// nodes, and which applications run on it. aos_config_check --node prints
// it:
//
//   node pi1 (hostname pi1, port 9971)
//     sends (5):
//       /pi1/aos aos.timing.Report -> pi2 (best effort, time to live 500 ms)
//       /test aos.examples.Ping -> pi2 (reliable)
//       /pi1/aos aos.message_bridge.ServerStatistics (local)
//     receives (2):
//       /pi2/aos aos.timing.Report <- pi2
//     applications (2): message_bridge, ping

#include <string>

#include "aos/configuration.h"

namespace aos {

// The summary of `node` (a node of `config`), ending in '\n'.
std::string DescribeNode(const Configuration& config, const Node& node);

}  // namespace aos

#endif  // AOS_TOOLS_NODE_SUMMARY_H_
