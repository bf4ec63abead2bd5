#ifndef AOS_NETWORK_FORWARDED_ORIGINS_H_
#define AOS_NETWORK_FORWARDED_ORIGINS_H_

// A forwarded message's path origins (aos/events/path_origins.h) across the
// network (docs/network.md, "Path latency across nodes"). The source's
// bridge puts the origins on the wire as its loop had them, in its own
// clock; forwarding is not a hop. The destination's bridge believes what
// can be true and translates it into its own clock with its estimate of the
// source's clock offset:
//
//   OriginsToWire(context.origins, &message);                 // sending
//
//   const ReceivedOrigins received = ReceiveOrigins(          // receiving
//       OriginsFromWire(message), peer.clock.estimate(), now_ns);
//   invalid_origins += received.invalid;
//   origins_without_offset += received.without_offset;
//   remote_origin.origins = &received.origins;
//
// Sign: the estimate's offset is the peer's clock minus ours
// (clock_offset_estimator.h), so a time t of the peer's is t - offset of
// ours, and the truth is within the estimate's uncertainty of that.
//
// Network data is untrusted: nothing here trusts a count, an id or a time
// that arrived, and no input reaches a CHECK or overflows. Never allocates.

#include <cstdint>

#include "aos/events/path_origins.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/clock_offset_estimator.h"

namespace aos::message_bridge {

// Sets message's origin_count, origins_dropped and origins from `origins`,
// as they are (no hop added, no translation).
void OriginsToWire(const PathOrigins& origins, aos_bridge_Message* message);

// The origins of `message` as they arrived, unchecked: its count (which
// may be anything), dropped count and all kMaxPathOrigins slots.
PathOrigins::Raw OriginsFromWire(const aos_bridge_Message& message);

struct ReceivedOrigins {
  // What the message carries on this node: the origins that can be true,
  // in this node's clock, each with an uncertainty of at least the
  // estimate's; and the sender's count of origins left out on the way.
  PathOrigins origins;
  // Origins dropped as impossible (PathOrigins::FromRaw's rules): past a
  // count over kMaxPathOrigins (a count over it drops them all, counted as
  // kMaxPathOrigins), id 0, 0 hops, an id seen before in the message; a
  // time that in this node's clock is later than `now_ns` by more than its
  // uncertainty, or that is no clock's reading (more than 2^62 ns, about
  // 146 years, from zero on the sender's clock or, translated, on ours).
  uint32_t invalid = 0;
  // Origins that could be true but were dropped because there is no
  // estimate to translate them with (before the first clock exchange with
  // the peer, or for a message of a boot the estimate is not of): a time
  // is never made up.
  uint32_t without_offset = 0;
};

// The origins in `raw`, which arrived from the network, in this node's
// clock. `estimate` is this bridge's estimate of the source node's clock
// offset (valid false: none); `now_ns` is this node's monotonic time before
// the message is re-sent (its re-send time is no earlier, and its origins
// came before it).
ReceivedOrigins ReceiveOrigins(const PathOrigins::Raw& raw,
                               const ClockOffsetEstimator::Estimate& estimate,
                               int64_t now_ns);

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_FORWARDED_ORIGINS_H_
