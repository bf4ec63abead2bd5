#ifndef AOS_TOOLS_BRIDGE_STATISTICS_FORMAT_H_
#define AOS_TOOLS_BRIDGE_STATISTICS_FORMAT_H_

// What the message bridge of one node says about the messages it receives
// (aos.message_bridge.ClientStatistics), as a table for people, in the
// streamer's style:
//
// ```
//   network into pi1 (message_bridge): clock offset and one-way latency in us
//     from  state      received  lost  dup  dropped  reboots  disc  offset ...
//     pi2   CONNECTED      1203     0    0        0        0     0   -3.10 ...
// ```
//
// One row per peer: its state, messages received (re-sent locally), lost
// (sent there, never arrived: queue index gaps), duplicates, dropped (damaged,
// unknown channel, oversize, refused by the local channel: all counted, none
// re-sent), peer reboots, disconnects, the clock offset estimate (peer minus
// this node) and its uncertainty, and the one-way latency since the bridge
// started (count, min, p50, p99, p99.9, max) from its histogram. Under the
// table, only where they are not zero: refused reboots, forwarded path
// origins dropped as impossible or for want of a clock offset estimate, and
// samples from no node of the configuration.
// docs/network.md defines every figure.

#include <string>
#include <string_view>

#include "aos/events/timing_report_format.h"
#include "aos/network/client_statistics_generated.h"

namespace aos {

// The table for `statistics`, published by node `node`'s bridge; times in
// `unit`. Figures the bridge does not have yet (no offset estimate, no
// latency sample) are "-". Ends in '\n'.
std::string FormatClientStatistics(
    const message_bridge::ClientStatistics& statistics, std::string_view node,
    TimeUnit unit);

}  // namespace aos

#endif  // AOS_TOOLS_BRIDGE_STATISTICS_FORMAT_H_
