#include "aos/events/simulated_channel.h"

#include <algorithm>
#include <cstring>

#include "aos/configuration.h"

namespace aos {

SimulatedChannel::SimulatedChannel(const Configuration* configuration,
                                   const Channel* channel)
    : channel_(channel),
      storage_duration_(std::chrono::nanoseconds(
          configuration::ChannelStorageDurationNs(*configuration, *channel))) {
  queue_size_ = configuration::ChannelQueueSize(*configuration, *channel);
  slots_.resize(queue_size_);
  for (Slot& slot : slots_)
    slot.data.resize(configuration::MessageBufferSize(*channel));
}

RawSender::Error SimulatedChannel::Send(
    const uint8_t* data, size_t size, monotonic_clock::time_point monotonic_now,
    realtime_clock::time_point realtime_now, const Origin& origin,
    const PathOrigins* path_origins, uint32_t* queue_index) {
  Slot& slot = slots_[next_queue_index_ % queue_size_];
  if (next_queue_index_ >= queue_size_ &&
      slot.context.monotonic_event_time + storage_duration_ > monotonic_now) {
    // The message queue_size messages ago is younger than the storage
    // duration: more than frequency * duration messages in one duration.
    return RawSender::Error::kMessagesSentTooFast;
  }
  memcpy(slot.data.data(), data, size);
  slot.context.monotonic_event_time = monotonic_now;
  slot.context.realtime_event_time = realtime_now;
  const bool forwarded =
      origin.remote_queue_index != Context::kInvalidQueueIndex;
  slot.context.monotonic_remote_time =
      forwarded ? origin.monotonic_remote_time : monotonic_now;
  slot.context.realtime_remote_time =
      forwarded ? origin.realtime_remote_time : realtime_now;
  slot.context.queue_index = next_queue_index_;
  slot.context.remote_queue_index =
      forwarded ? origin.remote_queue_index : next_queue_index_;
  slot.context.source_boot_uuid = origin.source_boot_uuid;
  slot.context.origins =
      path_origins != nullptr ? *path_origins : PathOrigins();
  slot.context.size = size;
  slot.context.data = slot.data.data();
  *queue_index = next_queue_index_;
  ++next_queue_index_;
  for (EventScheduler::Event* watcher : watchers_) {
    if (!watcher->scheduled()) watcher_wakeup_(watcher, monotonic_now);
  }
  if (send_hook_) send_hook_(slot);
  return RawSender::Error::kOk;
}

}  // namespace aos
