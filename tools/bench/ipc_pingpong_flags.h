#ifndef TOOLS_BENCH_IPC_PINGPONG_FLAGS_H_
#define TOOLS_BENCH_IPC_PINGPONG_FLAGS_H_

// The flags aos_pingpong and iceoryx_pingpong share, read into
// PingPongOptions (ipc_pingpong.h).

#include "absl/status/statusor.h"
#include "tools/bench/ipc_pingpong.h"

namespace aos::bench {

// The flags (--role, --mode, --payload_bytes, --rate_hz, --count,
// --seconds, --priority, --json, --ready_file) as options, checked: an
// error is one line naming the flag and its value and saying what to give
// instead.
absl::StatusOr<PingPongOptions> PingPongOptionsFromFlags();

}  // namespace aos::bench

#endif  // TOOLS_BENCH_IPC_PINGPONG_FLAGS_H_
