#include "examples/pingpong_flags.h"

#include "aos/config_flag.h"
#include "aos/node_flag.h"
#include "aos/util/cpu_set.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_int32(priority, 5, "SCHED_FIFO priority (0 = normal scheduling).");
DEFINE_string(affinity, "", "CPUs to run on, e.g. 1 or 0,2-3 (default: any).");

namespace aos::examples {

FlatbufferDetachedBuffer<Configuration> ReadPingPongConfig() {
  auto config = ReadConfigFlag("examples/pingpong_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  return std::move(config).value();
}

const Node* ReadPingPongNode(const Configuration& config) {
  auto node = ReadNodeFlag(config);
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  return *node;
}

void ApplyRealtimeFlags(EventLoop* loop) {
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99,
                               " is not a SCHED_FIFO priority: give 1-99, or "
                               "0 for normal scheduling"));
  loop->SetRuntimeRealtimePriority(FLAGS_priority);
  if (FLAGS_affinity.empty()) return;
  auto cpus = ParseCpuList(FLAGS_affinity);
  if (!cpus.ok()) {
    ExitForUserError(
        StrCat("--affinity=", FLAGS_affinity, ": ", cpus.status().message()));
  }
  loop->SetRuntimeAffinity(*cpus);
}

}  // namespace aos::examples
