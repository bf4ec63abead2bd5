#ifndef EXAMPLES_PINGPONG_FLAGS_H_
#define EXAMPLES_PINGPONG_FLAGS_H_

// The flags ping and pong share: --config, --priority and --affinity.

#include <optional>
#include <string_view>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"

namespace aos::examples {

// Reads --config (default: pingpong_config.json next to the binary). On
// failure prints "<program>: <why>" to stderr and returns nullopt.
std::optional<FlatbufferDetachedBuffer<Configuration>> ReadPingPongConfig(
    std::string_view program);

// Applies --priority and --affinity to `loop`. On a bad --affinity prints
// "<program>: --affinity=...: <why>" and returns false.
bool ApplyRealtimeFlags(std::string_view program, EventLoop* loop);

}  // namespace aos::examples

#endif  // EXAMPLES_PINGPONG_FLAGS_H_
