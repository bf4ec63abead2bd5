#include "aos/network/bridge_write_pack.h"

#include <algorithm>

#include "aos/network/dds_participant.h"

namespace aos::message_bridge {

bool WritePack::Write(dds_entity_t writer, const void* sample) {
  if (dds_write(writer, sample) < 0) {
    write_failures_->fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (std::find(unflushed_writers_.begin(), unflushed_writers_.end(), writer) ==
      unflushed_writers_.end()) {
    unflushed_writers_.push_back(writer);
  }
  if (++unflushed_writes_ >= kMaxUnflushedWrites) Flush();
  return true;
}

void WritePack::Flush() {
  for (dds_entity_t writer : unflushed_writers_) DdsParticipant::Flush(writer);
  unflushed_writers_.clear();
  unflushed_writes_ = 0;
}

}  // namespace aos::message_bridge
