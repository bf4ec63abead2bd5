#ifndef AOS_NETWORK_FORWARDED_MESSAGE_CHECK_H_
#define AOS_NETWORK_FORWARDED_MESSAGE_CHECK_H_

// What a receiving bridge checks before re-sending a message that arrived
// from the network into a local channel. Network data is untrusted: a
// message that fails any check is dropped and counted, never re-sent.
//
//   ForwardedMessageCheck check(config, channel, my_node);  // setup
//   switch (check.Check(sample.channel_index, sample.source_node,
//                       data, size)) { ... }               // per message
//
// Check never allocates: flatbuffers' reflection Verifier walks the message
// against the channel's schema (embedded in the flattened configuration).

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"

namespace aos::message_bridge {

enum class ForwardedVerdict {
  kOk,
  // The message names a channel other than its topic's, or a source node
  // that is not the channel's source_node.
  kUnknownChannel,
  // Larger than the channel's max_size.
  kOversize,
  // Not a valid flatbuffer of the channel's type.
  kInvalid,
};

class ForwardedMessageCheck {
 public:
  // For messages of `channel` (of `config`) arriving at `node`. Fails,
  // naming the channel, if it has no schema to verify against or is not
  // forwarded to `node` from a node of the configuration.
  static absl::StatusOr<ForwardedMessageCheck> Make(const Configuration& config,
                                                    const Channel& channel,
                                                    const Node& node);

  ForwardedVerdict Check(uint32_t channel_index, uint32_t source_node,
                         const uint8_t* data, size_t size) const;

  uint32_t channel_index() const { return channel_index_; }
  uint32_t source_node_index() const { return source_node_index_; }

 private:
  ForwardedMessageCheck(const Channel* channel, uint32_t channel_index,
                        uint32_t source_node_index)
      : channel_(channel),
        channel_index_(channel_index),
        source_node_index_(source_node_index) {}

  const Channel* channel_;
  uint32_t channel_index_;
  uint32_t source_node_index_;
};

// "Verdict" names for logs: "ok", "unknown channel", "oversize", "invalid".
const char* VerdictName(ForwardedVerdict verdict);

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_FORWARDED_MESSAGE_CHECK_H_
