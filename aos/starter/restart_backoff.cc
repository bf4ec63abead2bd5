#include "aos/starter/restart_backoff.h"

#include <algorithm>

namespace aos::starter {

std::chrono::nanoseconds RestartBackoff::OnExit(
    std::chrono::nanoseconds run_time) {
  if (run_time >= options_.healthy_after) {
    quick_exits_in_a_row_ = 0;
    return std::chrono::nanoseconds(0);
  }
  ++quick_exits_in_a_row_;
  std::chrono::nanoseconds wait = options_.initial;
  for (int i = 1; i < quick_exits_in_a_row_ && wait < options_.max; ++i) {
    wait *= 2;
  }
  return std::min(wait, options_.max);
}

}  // namespace aos::starter
