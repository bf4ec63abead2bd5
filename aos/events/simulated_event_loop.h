#ifndef AOS_EVENTS_SIMULATED_EVENT_LOOP_H_
#define AOS_EVENTS_SIMULATED_EVENT_LOOP_H_

// Many event loops in one process on simulated time: deterministic tests
// with exact timing.
//
//   aos::SimulatedEventLoopFactory factory(&config.message());
//   std::unique_ptr<aos::EventLoop> ping = factory.MakeEventLoop("ping");
//   std::unique_ptr<aos::EventLoop> pong = factory.MakeEventLoop("pong");
//   ... set them up ...
//   factory.RunFor(std::chrono::seconds(1));
//
// Determinism: the same setup gives the same callbacks in the same order at
// the same simulated times, every run. Events run in time order, ties in
// the order they were scheduled; a message is delivered to watchers at its
// send time, after the sending callback returns.
//
// Exact timing: nothing takes time unless a test says so.
// SetWakeupDelay(d) makes every wakeup (timer, phased loop, watcher) start d
// after it was due; AdvanceTime(h) inside a handler makes the handler take h.
// So a timer's wakeup latency is exactly d and its handler time exactly h.
//
// Nodes: a multi-node config gets one clock per node (node time = simulated
// time + the node's offset, SetMonotonicOffset; its realtime = node time +
// its realtime offset, SetRealtimeOffset), and each node has its own
// copy of every channel it can read. Channels forwarded to other nodes
// (destination_nodes) cross a simulated network, as the message bridge
// forwards them in production (aos/events/simulated_network.h explains the
// remote fields, delays, loss, disconnects and reboots).
//
// Memory: making loops, senders, fetchers, watchers and timers allocates;
// once a loop runs, nothing it does allocates.

#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/events/event_scheduler.h"
#include "aos/events/simulated_network.h"

namespace aos {

class SimulatedChannel;
class SimulatedEventLoop;

class SimulatedEventLoopFactory {
 public:
  // `configuration` must outlive the factory and every loop it makes.
  explicit SimulatedEventLoopFactory(const Configuration* configuration);
  ~SimulatedEventLoopFactory();

  // A new event loop called `name` on `node` (which must be given in a
  // multi-node config and null in a single-node one; aborts otherwise). It
  // starts running at the next RunFor()/Run(). Destroy every loop before the
  // factory.
  std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name,
                                           const Node* node = nullptr);

  // Runs every loop for exactly `duration` of simulated time.
  void RunFor(monotonic_clock::duration duration);
  // Runs until a loop calls Exit() (or Exit() is called here, or through an
  // ExitHandle), or nothing is left to do. Returns the status an ExitHandle
  // gave (OK otherwise), as AOS's does.
  RunStatus Run();
  void Exit();
  // A handle that ends Run() with a status (AOS's MakeExitHandle); the
  // first status given wins. Must not outlive the factory.
  std::unique_ptr<ExitHandle> MakeExitHandle();

  // See the header comment: injected wakeup delay, and handler time.
  void SetWakeupDelay(monotonic_clock::duration delay);
  void AdvanceTime(monotonic_clock::duration duration);

  // A node's clock is the simulated time plus its offset. Before any loop of
  // the node is made.
  void SetMonotonicOffset(const Node* node, monotonic_clock::duration offset);
  // A node's realtime clock is its monotonic time plus its realtime offset:
  // by default 2026-01-01 UTC (1767225600 s), so realtime looks like a
  // date; replay sets the recorded one. Before any loop of the node is made.
  void SetRealtimeOffset(const Node* node, realtime_clock::duration offset);

  // The simulated network (simulated_network.h): per link from one node to
  // another, its delay (default 100 us), the loss of best-effort messages
  // (0..1), and whether it is connected.
  void SetLinkDelay(const Node* from, const Node* to,
                    monotonic_clock::duration delay);
  void SetLinkLoss(const Node* from, const Node* to, double loss);
  void DisconnectLink(const Node* from, const Node* to);
  void ConnectLink(const Node* from, const Node* to);
  SimulatedNetwork::LinkStatistics link_statistics(const Node* from,
                                                   const Node* to) const;
  // The node's boot (every message it sends carries it). RebootNode gives
  // it a new one and starts its channels over, empty, at queue index 0, as
  // a restarted machine has. A reboot ends every process on the node:
  // destroy the node's event loops first (their senders, fetchers and
  // watchers with them), and make new ones after. Messages already on the
  // network still arrive.
  UUID boot_uuid(const Node* node) const;
  void RebootNode(const Node* node);

  monotonic_clock::time_point monotonic_now(const Node* node = nullptr) const;
  realtime_clock::time_point realtime_now(const Node* node = nullptr) const;

  const Configuration* configuration() const { return configuration_; }

 private:
  friend class SimulatedEventLoop;

  struct NodeClock {
    monotonic_clock::duration monotonic_offset =
        monotonic_clock::duration::zero();
    realtime_clock::duration realtime_offset;
  };

  SimulatedChannel* GetSimulatedChannel(const Channel* channel,
                                        const Node* node);
  void StartPendingLoops();
  // Aborts if `node` has a loop: `setter` would change its clock under it.
  void CheckNoLoopOn(const Node* node, std::string_view setter) const;
  NodeClock& Clock(const Node* node);
  const NodeClock& Clock(const Node* node) const;

  const Configuration* const configuration_;
  EventScheduler scheduler_;
  // The first status an ExitHandle gave, for Run() to return.
  std::optional<absl::Status> exit_status_;
  // Mutable: a node's boot is made when first asked for.
  mutable SimulatedNetwork network_;
  std::map<const Node*, NodeClock> clocks_;
  std::map<std::pair<const Node*, const Channel*>,
           std::unique_ptr<SimulatedChannel>>
      channels_;
  std::vector<SimulatedEventLoop*> loops_;
};

}  // namespace aos

#endif  // AOS_EVENTS_SIMULATED_EVENT_LOOP_H_
