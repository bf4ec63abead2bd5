#include "examples/pingpong_flags.h"

#include <iostream>

#include "aos/config_flag.h"
#include "aos/util/cpu_set.h"
#include "gflags/gflags.h"

DEFINE_int32(priority, 5, "SCHED_FIFO priority (0 = normal scheduling).");
DEFINE_string(affinity, "", "CPUs to run on, e.g. 1 or 0,2-3 (default: any).");

namespace aos::examples {

std::optional<FlatbufferDetachedBuffer<Configuration>> ReadPingPongConfig(
    std::string_view program) {
  auto config = ReadConfigFlag("examples/pingpong_config.json");
  if (!config.ok()) {
    std::cerr << program << ": " << config.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(config).value();
}

bool ApplyRealtimeFlags(std::string_view program, EventLoop* loop) {
  loop->SetRuntimeRealtimePriority(FLAGS_priority);
  if (FLAGS_affinity.empty()) return true;
  auto cpus = ParseCpuList(FLAGS_affinity);
  if (!cpus.ok()) {
    std::cerr << program << ": --affinity=" << FLAGS_affinity << ": "
              << cpus.status().message() << "\n";
    return false;
  }
  loop->SetRuntimeAffinity(*cpus);
  return true;
}

}  // namespace aos::examples
