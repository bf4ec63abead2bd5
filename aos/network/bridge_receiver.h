#ifndef AOS_NETWORK_BRIDGE_RECEIVER_H_
#define AOS_NETWORK_BRIDGE_RECEIVER_H_

// The message bridge's receiving side: for every channel forwarded to this
// node, it reads the channel's DDS topic (bridge_topics.h) and re-sends
// each message into local shared memory with RawSender::Send(RemoteOrigin):
// the source's send times, queue index and boot, and its path origins in
// our clock, translated with the peer link's clock offset estimate of the
// source (forwarded_origins.h).
//
// Network data is untrusted. A message that names another channel or a
// node that is no peer, is larger than max_size, or fails the flatbuffer
// Verifier for the channel's schema is dropped and counted
// (forwarded_message_check.h); one already re-sent (same boot, queue index
// not newer) is counted as a duplicate; gaps in a channel's queue indices
// are counted as lost; the one-way latency of each message re-sent after a
// clock estimate is recorded (ClientStatistics). For channels whose
// timestamps go back, each re-send is confirmed to the source
// (bridge_remote_timestamps.h).
//
//   BridgeReceiver receiver(&loop, dds, &link, statistics, timestamps);
//   receiver.AddChannel(channel);   // each, before Run()
//   loop.OnRun([&]() { receiver.OnRun(); });
//   ... receiver.Serve();           // the wakeup fd readable
//
// Where it runs: while the loop runs, every sample is taken, checked and
// re-sent in Cyclone's receive thread, in the listener of the sample's reader,
// and the loop is not woken for it: a hand-over to the loop would add a wakeup
// of another thread to every forwarded message's path (on machines whose idle
// CPUs halt, most of what the bridge adds; docs/benchmarks.md, "Re-sending in
// Cyclone's receive thread"). Before the loop runs (and after Run() returns),
// the listener only wakes the loop, which takes what arrived in its next wakeup
// (Serve). The threads meet under priority-inheriting locks: the receiver's own
// (held across a whole take, DDS calls and the deliveries' writes included; the
// loop takes it in Serve and in a paced channel's retry timer), and three that
// the listener holds for one message at a time and across no DDS call: the
// statistics' received_mutex() (each count, after the re-send: Publish holds it
// while it builds, and no re-send waits for that), the loop's lock for sends
// from another thread (RawSender::AllowSendsFromAnotherThread: the senders'
// buffers and timing figures; the timing report holds it while it reads them)
// and each peer's view() (its boot and clock estimate, which the loop updates).
// The re-sends are not in the loop's trace ring, and are not callbacks of the
// loop (no handler time of the bridge's for them), but for paced ones the retry
// timer makes (below).
//
// Reliable channels pace what their own rate limit refuses: a re-send the
// local channel refuses as too fast (the backlog of a stall upstream arrives
// at once, faster than the channel's frequency allows, although its source
// sent it within the rate) is held, with everything after it left in the
// DDS reader, until the oldest of the channel's last queue_size re-sends
// has aged out (resend_pacer.h). Then whichever thread comes first retries
// it and takes the rest: Cyclone's, at the next arrival on the channel, or
// the loop, from a timer of its own per channel ("pace <channel> <type>",
// whose handler time those re-sends are); while arrivals come for it (a
// flood goes on), the timer waits kRetryBackstop past the due time, so that
// the loop is not woken for every slot that ages out, and the loop takes
// kLoopTakeLimit samples at a time. Each such message is
// counted once as paced_packets, and its wait is in the one-way latency;
// every refusal, retries included, is also in the bridge's sender's
// kMessagesSentTooFast count (its timing report). What pacing cannot save:
// the reader keeps about the channel's queue length of samples (QueueDepth,
// rounded down, at most 10000), and a hold long enough for more to arrive
// overwrites the oldest, counted as lost_packets; a message held when Run()
// returns is re-sent only if the loop runs again. A best-effort channel's
// refused re-send is dropped and counted (dropped_send_failed).
//
// The samples are deserialised into a buffer per channel made before Run()
// (Cyclone allocates one of its own only for a sample larger than
// max_size, which is refused); re-sending allocates nothing.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/network/bridge_peer_link.h"
#include "aos/network/bridge_remote_timestamps.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/bridge_write_pack.h"
#include "aos/network/dds_participant.h"
#include "aos/network/forwarded_message_check.h"
#include "aos/network/resend_pacer.h"
#include "aos/util/priority_inheritance_mutex.h"
#include "aos/util/uuid.h"

namespace aos::message_bridge {

class BridgeReceiver {
 public:
  // Re-sends on `loop`'s node what peers of `link` forward here, counting
  // in `statistics` and confirming through `timestamps`. All must outlive
  // it; `dds` must be deleted before it (its listeners raise Signals in
  // it).
  BridgeReceiver(EventLoop* loop, DdsParticipant* dds, const PeerLink* link,
                 BridgeStatistics* statistics, RemoteTimestamps* timestamps);

  BridgeReceiver(const BridgeReceiver&) = delete;
  BridgeReceiver& operator=(const BridgeReceiver&) = delete;

  // Receives `channel`, which is forwarded to this node: its reader and
  // local sender. Fails, naming the channel, if it has no schema to verify
  // with. What the channel already holds from the source (a restarted
  // bridge) is not re-sent again. Before the loop runs.
  absl::Status AddChannel(const Channel* channel);

  // From the loop's OnRun: what arrives from now on, while the loop runs,
  // is re-sent in Cyclone's thread, where it arrived. Once Run() returns,
  // arrivals wait for the loop again (a re-send begun just before may end
  // just after).
  void OnRun() { resend_where_arrived_.store(true, std::memory_order_release); }

  // In the loop, when the participant's wakeup fd is readable: takes and
  // re-sends what arrived before OnRun().
  void Serve();

 private:
  // A channel forwarded to this node.
  struct Incoming {
    // Its reader's arrivals go to receiver->OnArrival(this).
    Incoming(ForwardedMessageCheck check, BridgeReceiver* receiver)
        : check(check), arrived([this, receiver](dds_entity_t) {
            return receiver->OnArrival(this);
          }) {}
    ForwardedMessageCheck check;
    const Channel* channel = nullptr;
    bool timestamps_go_back = false;
    int32_t depth = 1;
    dds_entity_t reader = 0;
    DdsParticipant::Signal arrived;
    std::unique_ptr<RawSender> sender;
    // The sample Cyclone deserialises into, with our buffer.
    aos_bridge_Message sample = {};
    std::unique_ptr<uint8_t[]> buffer;
    uint32_t buffer_size = 0;
    // The last message re-sent: its source boot and queue index there.
    bool has_last = false;
    UUID last_boot;
    uint32_t last_queue_index = 0;
    // Reliable channels: the sent times of the last re-sends, and the
    // loop's timer that retries a refused one (null: best-effort).
    std::unique_ptr<ResendPacer> pacer;
    TimerHandler* retry = nullptr;
    // `sample` was refused as too fast and waits to be re-sent at
    // retry_at; nothing more is taken until it went. Under mutex_, as is:
    bool held = false;
    monotonic_clock::time_point retry_at = monotonic_clock::min_time;
    // Cyclone's thread came for the held sample since the loop last
    // looked: arrivals are retrying it.
    bool arrived_while_held = false;
  };

  // How long past a held sample's due time the loop's retry timer waits
  // when arrivals came for it meanwhile: they will again, and the timer is
  // only the backstop for when they stop.
  static constexpr std::chrono::milliseconds kRetryBackstop{1};
  // The most samples the loop takes of a reliable channel in one call (the
  // retry timer takes the rest in its next), so that Cyclone's thread never
  // waits long for the lock (unread datagrams overflow the socket buffer).
  static constexpr int kLoopTakeLimit = 256;

  // In Cyclone's thread, for samples on `incoming`'s reader: re-sends them
  // there once the loop runs (false: the loop need not wake), else leaves
  // them to the loop (true).
  bool OnArrival(Incoming* incoming);
  // Takes and re-sends what `incoming`'s reader has, then sends the
  // deliveries it confirmed. Holds mutex_. A re-send refused as too fast is
  // held; a held one is retried first when it is due, in either thread, and
  // nothing is taken while it stays held. `in_loop` (the loop's thread), it
  // schedules the retry timer for one left held (kRetryBackstop late when
  // arrivals came for it meanwhile), and takes at most kLoopTakeLimit,
  // scheduling the timer for the rest. True when Cyclone's thread left a
  // new one held: the loop must wake to schedule its retry. While one is
  // held, the loop always has its retry in hand (the timer scheduled, or
  // that wakeup raised).
  bool TakeMessages(Incoming* incoming, bool in_loop);
  // Checks and re-sends `incoming->sample`, counting; on a refusal of a
  // reliable channel's re-send as too fast, holds it (Incoming::held).
  void Receive(Incoming* incoming, const PeerLink::Peer& peer);
  // Whether a message (boot, queue index) is newer than the last re-sent.
  bool IsNew(const Incoming& incoming, const UUID& boot,
             uint32_t queue_index) const;
  // Puts our buffer back if Cyclone replaced it (a message larger than it).
  void RestoreBuffer(Incoming* incoming);

  EventLoop* const loop_;
  DdsParticipant* const dds_;
  const PeerLink* const link_;
  BridgeStatistics* const statistics_;
  RemoteTimestamps* const timestamps_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  // OnRun() was called.
  std::atomic<bool> resend_where_arrived_{false};
  // One thread takes at a time: Cyclone may call listeners from more than
  // one (unicast, multicast), and the loop serves what came before Run().
  PriorityInheritanceMutex mutex_;
  // The deliveries TakeMessages() writes (RemoteTimestamps::Confirm),
  // flushed at its end; the loop's writes have a pack of their own.
  WritePack confirm_pack_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_RECEIVER_H_
