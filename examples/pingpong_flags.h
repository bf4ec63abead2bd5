#ifndef EXAMPLES_PINGPONG_FLAGS_H_
#define EXAMPLES_PINGPONG_FLAGS_H_

// The flags ping and pong share: --config, --node, --priority and
// --affinity.

#include <string_view>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"

namespace aos::examples {

// Reads --config (default: pingpong_config.json next to the binary). A
// problem ends the program with one line naming it.
FlatbufferDetachedBuffer<Configuration> ReadPingPongConfig();

// The node of `config` to run as (--node, or this machine's hostname; null
// in a single-node config). A problem ends the program with one line.
const Node* ReadPingPongNode(const Configuration& config);

// Applies --priority and --affinity to `loop`. A bad value ends the program
// with one line naming the flag.
void ApplyRealtimeFlags(EventLoop* loop);

}  // namespace aos::examples

#endif  // EXAMPLES_PINGPONG_FLAGS_H_
