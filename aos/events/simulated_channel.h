#ifndef AOS_EVENTS_SIMULATED_CHANNEL_H_
#define AOS_EVENTS_SIMULATED_CHANNEL_H_

// One channel on one node of a simulation: a ring of preallocated message
// slots, the simulated counterpart of a shared-memory queue. Internal to the
// simulated event loop.

#include <cstdint>
#include <functional>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/events/event_scheduler.h"

namespace aos {

class SimulatedChannel {
 public:
  struct Slot {
    Context context;
    std::vector<uint8_t> data;
  };

  // Sizes the ring for frequency * channel_storage_duration messages (at
  // least one) of max_size bytes. Allocates.
  SimulatedChannel(const Configuration* configuration, const Channel* channel);

  const Channel* channel() const { return channel_; }
  size_t queue_size() const { return queue_size_; }
  // Queue index the next message will get.
  uint32_t next_queue_index() const { return next_queue_index_; }
  // The oldest queue index still kept.
  uint32_t oldest_queue_index() const {
    return next_queue_index_ > queue_size_
               ? next_queue_index_ - static_cast<uint32_t>(queue_size_)
               : 0;
  }
  const Slot& At(uint32_t queue_index) const {
    return slots_[queue_index % queue_size_];
  }

  // What a sent message says about where it came from: for a local send,
  // min times and kInvalidQueueIndex (the remote fields copy the local ones)
  // and this node's boot; for a message forwarded from another node, its
  // times, queue index and boot there.
  using Origin = RemoteOrigin;

  // Stores a message sent at `monotonic_now`/`realtime_now` (node time),
  // wakes the watchers, and tells the send hook. kMessagesSentTooFast when
  // the message queue_size messages ago is younger than the storage
  // duration. Never allocates.
  // `path_origins` (null: none) are the message's, in this node's clock.
  RawSender::Error Send(const uint8_t* data, size_t size,
                        monotonic_clock::time_point monotonic_now,
                        realtime_clock::time_point realtime_now,
                        const Origin& origin, const PathOrigins* path_origins,
                        uint32_t* queue_index);

  // How long the channel keeps a message (channel_storage_duration).
  monotonic_clock::duration storage_duration() const {
    return storage_duration_;
  }

  // When a send at this node time or later is no longer refused as too
  // fast: when the message queue_size messages ago is storage_duration old;
  // min_time while the queue is not full yet.
  monotonic_clock::time_point SendAllowedAt() const {
    if (next_queue_index_ < queue_size_) return monotonic_clock::min_time;
    return slots_[next_queue_index_ % queue_size_]
               .context.monotonic_event_time +
           storage_duration_;
  }

  // Starts the queue over, empty, at queue index 0, as a rebooted node's
  // shared memory does. Only while no loop uses the channel (no watchers,
  // fetchers or senders). Never allocates.
  void Restart() { next_queue_index_ = 0; }

  // Watchers to wake when a message arrives; `wakeup` schedules one at a
  // node time.
  void AddWatcher(EventScheduler::Event* watcher) {
    watchers_.push_back(watcher);
  }
  void RemoveWatcher(EventScheduler::Event* watcher) {
    std::erase(watchers_, watcher);
  }
  void set_watcher_wakeup(
      std::function<void(EventScheduler::Event*, monotonic_clock::time_point)>
          wakeup) {
    watcher_wakeup_ = std::move(wakeup);
  }
  // Called with every message sent here (the simulated network forwards
  // it). Set before the loops run.
  void set_send_hook(std::function<void(const Slot&)> hook) {
    send_hook_ = std::move(hook);
  }

 private:
  const Channel* const channel_;
  const monotonic_clock::duration storage_duration_;
  size_t queue_size_;
  std::vector<Slot> slots_;
  uint32_t next_queue_index_ = 0;
  std::vector<EventScheduler::Event*> watchers_;
  std::function<void(EventScheduler::Event*, monotonic_clock::time_point)>
      watcher_wakeup_;
  std::function<void(const Slot&)> send_hook_;
};

}  // namespace aos

#endif  // AOS_EVENTS_SIMULATED_CHANNEL_H_
