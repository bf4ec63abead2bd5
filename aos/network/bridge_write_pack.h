#ifndef AOS_NETWORK_BRIDGE_WRITE_PACK_H_
#define AOS_NETWORK_BRIDGE_WRITE_PACK_H_

// How the message bridge's DDS writes go out: every write (a forwarded
// message, a probe, a delivery) goes through its one WritePack, which lets
// Cyclone pack it with the others (DdsParticipant::Options::
// batch_writes) and sends the packs at the end of the loop's wakeup that
// wrote them, or after kMaxUnflushedWrites writes: many samples a datagram
// when messages come faster than the loop wakes up, and no sample left
// waiting for a later write.
//
//   WritePack pack(&statistics->write_failures());
//   pack.Reserve(writers);                          // before Run()
//   loop.OnWakeupEnd([&]() { pack.Flush(); });
//   pack.Write(writer, &sample);                    // in the loop's thread
//
// Never allocates once Reserve()d for every writer. Not thread safe: one
// thread writes a pack (the loop's, or, for the receiving side's
// deliveries, Cyclone's receive thread, which flushes its own pack at the
// end of each arrival).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dds/dds.h"

namespace aos::message_bridge {

class WritePack {
 public:
  // Writes packed and not yet sent, across writers, after which the pack
  // sends them without waiting for the end of the wakeup: a wakeup lasts
  // as long as messages keep arriving, and a sample of a quiet channel must
  // not wait for a flood on another to stop. A full pack (about 100 small
  // samples) goes out by itself.
  static constexpr uint32_t kMaxUnflushedWrites = 64;

  // Failed writes are counted in `*write_failures`, which must outlive it
  // (and may be shared with packs of other threads).
  explicit WritePack(std::atomic<uint64_t>* write_failures)
      : write_failures_(write_failures) {}

  WritePack(const WritePack&) = delete;
  WritePack& operator=(const WritePack&) = delete;

  // Room for `writers` different writers between two flushes, so that
  // Write() never allocates. Before the loop runs.
  void Reserve(size_t writers) { unflushed_writers_.reserve(writers); }

  // dds_write; false (and counted) if it failed. The sample waits in the
  // writer's pack until Flush().
  bool Write(dds_entity_t writer, const void* sample);

  // Sends every pack written since the last flush. At the end of each of
  // the loop's wakeups, and after kMaxUnflushedWrites writes.
  void Flush();

 private:
  std::atomic<uint64_t>* const write_failures_;
  // Writers written to since the last Flush(), each once.
  std::vector<dds_entity_t> unflushed_writers_;
  uint32_t unflushed_writes_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_WRITE_PACK_H_
