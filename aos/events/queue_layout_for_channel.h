#ifndef AOS_EVENTS_QUEUE_LAYOUT_FOR_CHANNEL_H_
#define AOS_EVENTS_QUEUE_LAYOUT_FOR_CHANNEL_H_

// The sizes of a channel's shared-memory queue, from the configuration.
// aos/ipc_lib knows queues by plain sizes and counts (ipc_lib::QueueLayout)
// and nothing of configurations; this is where a channel becomes those
// numbers, for ShmEventLoop and for tools that open a channel's queue.
//
//   const ipc_lib::QueueLayout layout = QueueLayoutForChannel(config,
//   *channel); auto memory = ipc_lib::QueueMemory::Open(path, layout, 0600,
//   "/test T");

#include "aos/configuration_generated.h"
#include "aos/ipc_lib/queue_memory.h"

namespace aos {

// The layout of `channel`'s queue (a channel of `config`):
// - message_data_size: configuration::MessageBufferSize(channel), its
//   max_size rounded up to a multiple of 8;
// - channel_storage_duration_ns: configuration::ChannelStorageDurationNs;
// - queue_size: ceil(frequency × storage seconds), computed exactly in
//   integers, at least 1 (and at most UINT32_MAX; ipc_lib refuses layouts it
//   cannot pack, naming them, when the queue is opened);
// - num_senders, num_watchers: the channel's (negative values count as 0).
// The channel's num_readers is not used: readers take no slot, so any number
// may read. Pure and cheap; it allocates nothing.
ipc_lib::QueueLayout QueueLayoutForChannel(const Configuration& config,
                                           const Channel& channel);

}  // namespace aos

#endif  // AOS_EVENTS_QUEUE_LAYOUT_FOR_CHANNEL_H_
