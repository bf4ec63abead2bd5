#ifndef AOS_NETWORK_DDS_PARTICIPANT_H_
#define AOS_NETWORK_DDS_PARTICIPANT_H_

// The message bridge's DDS side: one Cyclone DDS participant with its
// writers and readers, and a way for an event loop to hear about arrivals.
//
//   auto dds = DdsParticipant::Make({.domain = 0, .interface = "lo"});
//   DdsParticipant::Signal arrived;                      // lives as long
//   dds_entity_t reader = dds.value()->MakeReader(
//       &aos_bridge_Message_desc, "aos_0_test", qos, &arrived).value();
//   loop.OnReadable(dds.value()->wakeup_fd(), [&] {
//     dds.value()->ClearWakeup();
//     if (arrived.Take()) { ... dds_take(reader, ...) until empty ... }
//   });
//
// Cyclone calls listeners in its own threads; they raise a Signal and
// write the participant's eventfd, after a Signal's in_listener function if
// it has one (which may take the samples there and leave the loop asleep).
// Cyclone allocates internally
// for every sample it sends or receives (serialisation, receive buffers):
// the bridge's DDS side is not allocation-free, its shared-memory side is.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aos/network/dds_security.h"
#include "aos/util/scoped_fd.h"
#include "dds/dds.h"

namespace aos::message_bridge {

class DdsParticipant {
 public:
  struct Options {
    // The DDS domain; bridges talk only within one.
    uint32_t domain = 0;
    // The network interface Cyclone uses, by name ("lo", "veth1") or
    // address; "" lets Cyclone choose.
    std::string interface;
    // Whether writers batch: dds_write only packs the sample, and the pack
    // goes out as one datagram when it is full (Cyclone's MaxMessageSize)
    // or at Flush(writer). Otherwise every dds_write sends at once. Set for
    // the domain by the first participant of a process on it: a later one
    // asking otherwise on that domain is refused by Make().
    bool batch_writes = false;
    // DDS Security: the participant authenticates with these files and
    // talks only to participants the same CAs admitted
    // (dds_security.h). Without it, no security: any participant of the
    // domain is heard.
    std::optional<DdsSecurityFiles> security = std::nullopt;
  };

  // Quality of service of one topic's writer or reader.
  struct Qos {
    // Reliable (resent until acknowledged) or best effort.
    bool reliable = true;
    // History: the last `depth` samples are kept (KEEP_LAST).
    int32_t depth = 1;
    // Samples older than this are dropped, sent or not; 0: never.
    int64_t lifespan_ns = 0;
  };

  // Raised from Cyclone's threads, taken in the loop's.
  class Signal {
   public:
    Signal() = default;
    // A reader's Signal that first runs `in_listener(reader)` in Cyclone's
    // listener thread, for every arrival, and then raises the signal if it
    // returned true: for what must happen where the sample arrived (the
    // bridge takes clock probes there, to stamp them before the loop's
    // wakeup, and re-sends forwarded messages there once its loop runs;
    // when it took everything, the loop is not woken). It must be safe to
    // run in that thread, while the loop runs, and until the participant
    // is gone.
    explicit Signal(std::function<bool(dds_entity_t reader)> in_listener)
        : in_listener_(std::move(in_listener)) {}

    // True if raised since the last Take().
    bool Take() { return raised_.exchange(false, std::memory_order_acq_rel); }
    // Raises it and wakes the loop; any thread (DDS listeners call it).
    // Raising it again before the loop took it costs no syscall.
    void Raise();
    // What a reader's listener does when samples arrive on `reader`: the
    // in_listener function, if any, then Raise() unless it returned false.
    void OnArrival(dds_entity_t reader);

   private:
    friend class DdsParticipant;
    const std::function<bool(dds_entity_t)> in_listener_;
    std::atomic<bool> raised_{false};
    int wakeup_fd_ = -1;
  };

  // What the domain's UDP sockets ask the kernel to buffer of what arrives
  // (SO_RCVBUF), in bytes. Linux grants at most net.core.rmem_max (and
  // doubles what it grants, for its own bookkeeping). What Cyclone's
  // receive thread has not read yet waits there: a datagram that does not
  // fit is dropped, and a reliable writer sends it again, in datagrams
  // of at most 1456 B, which cost the receiver more per sample; at 200 k
  // messages a second that turned one overflow into a collapse
  // (docs/benchmarks.md, "UDP receive buffers").
  static constexpr int64_t kSocketReceiveBufferBytes = int64_t{4} << 20;

  // How much of kSocketReceiveBufferBytes this machine grants (before the
  // kernel doubles it): net.core.rmem_max if lower; nullopt where it
  // cannot be read.
  static std::optional<int64_t> GrantedSocketReceiveBufferBytes();

  // The element of Cyclone's XML configuration (a child of <Internal>)
  // that asks for kSocketReceiveBufferBytes, accepting less without a
  // complaint: for a configuration of Cyclone's own (a bench's ddsperf) to
  // ask what the bridges' domains ask.
  static std::string SocketReceiveBufferXml();

  // Creates the domain (if this process has not) and the participant.
  // The domain's sockets ask for kSocketReceiveBufferBytes. Fails naming
  // the interface or domain Cyclone refused, or, with security, the file
  // that is wrong (CheckDdsSecurityFiles) or what Cyclone said when it
  // refused the participant, in one line. Installs InstallCycloneLog()
  // first: Cyclone's own lines are escaped and rate-limited from then on.
  static absl::StatusOr<std::unique_ptr<DdsParticipant>> Make(
      const Options& options);
  // Deletes the participant and everything made from it.
  ~DdsParticipant();

  DdsParticipant(const DdsParticipant&) = delete;
  DdsParticipant& operator=(const DdsParticipant&) = delete;

  // A writer on topic `topic` of `type`. `matched`, if given, is raised
  // whenever a new reader matches it (a peer's bridge started or came
  // back). Signals must outlive the participant.
  absl::StatusOr<dds_entity_t> MakeWriter(const dds_topic_descriptor_t* type,
                                          const std::string& topic,
                                          const Qos& qos,
                                          Signal* matched = nullptr);
  // A reader on topic `topic` of `type`; `arrived` is raised when samples
  // arrive.
  absl::StatusOr<dds_entity_t> MakeReader(const dds_topic_descriptor_t* type,
                                          const std::string& topic,
                                          const Qos& qos, Signal* arrived);

  // Sends what `writer` has packed (batch_writes), if anything. Any
  // thread.
  static void Flush(dds_entity_t writer) { dds_write_flush(writer); }

  // What the security files say, if the participant has security.
  const std::optional<DdsSecurityInfo>& security() const { return security_; }

  // Readable when a Signal was raised; ClearWakeup() before taking them.
  int wakeup_fd() const { return wakeup_fd_.get(); }
  void ClearWakeup();

  // A DDS topic name for an aos channel: "aos_<index>_" and the name and
  // type with every character but letters and digits as '_'.
  static std::string TopicName(uint32_t channel_index, std::string_view name,
                               std::string_view type);

 private:
  DdsParticipant() = default;

  absl::StatusOr<dds_entity_t> Topic(const dds_topic_descriptor_t* type,
                                     const std::string& name);

  dds_entity_t domain_ = 0;
  uint32_t domain_id_ = 0;
  dds_entity_t participant_ = 0;
  // Closes after the destructor deleted the participant, so no listener
  // can still write to it.
  ScopedFd wakeup_fd_;
  std::optional<DdsSecurityInfo> security_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_DDS_PARTICIPANT_H_
