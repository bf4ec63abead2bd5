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
// Per node, as in AOS (NodeEventLoopFactory below):
//
//   aos::NodeEventLoopFactory* pi1 = factory.GetNodeEventLoopFactory("pi1");
//   pi1->OnStartup([pi1]() { pi1->AlwaysStart<Ping>("ping"); });
//   factory.RunFor(std::chrono::seconds(1));  // pi1 starts: Ping is made
//   factory.RebootNode(pi1->node());  // Ping destroyed, then made again
//
// Determinism: the same setup gives the same callbacks in the same order at
// the same simulated times, every run. Events run in time order, ties in
// the order they were scheduled; a message is delivered to watchers
// send_delay() after its send time (0 unless set_send_delay() says
// otherwise), after the sending callback returns; fetchers see it at once.
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

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/events/event_scheduler.h"
#include "aos/events/simulated_network.h"

namespace aos {

class NodeEventLoopFactory;
class SimulatedChannel;
class SimulatedEventLoop;

class SimulatedEventLoopFactory {
 public:
  // AOS's default send delay (set_send_delay), for tests that want AOS's
  // timing; ours is zero.
  static constexpr std::chrono::nanoseconds kAosSendDelay =
      std::chrono::microseconds(50);

  // `configuration` must outlive the factory and every loop it makes. Makes
  // one NodeEventLoopFactory per node of the config (one, for no node, in a
  // single-node config).
  explicit SimulatedEventLoopFactory(const Configuration* configuration);
  // Shuts every started node down (its OnShutdown callbacks, then its
  // applications are destroyed), then aborts if an event loop is left:
  // destroy every loop that is not an application before the factory.
  ~SimulatedEventLoopFactory();

  SimulatedEventLoopFactory(const SimulatedEventLoopFactory&) = delete;
  SimulatedEventLoopFactory& operator=(const SimulatedEventLoopFactory&) =
      delete;

  // A new event loop called `name` on `node` (which must be given in a
  // multi-node config and null in a single-node one; aborts otherwise). It
  // starts running at the next RunFor()/RunUntil()/Run(). Destroy every loop
  // before the factory. Same as GetNodeEventLoopFactory(node)->
  // MakeEventLoop(name).
  std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name,
                                           const Node* node = nullptr);

  // The factory of one node (AOS's), owned by this factory and valid as
  // long as it. `node` as for MakeEventLoop; by name, the config's node
  // called `node_name`. Aborts, naming the config's nodes, when the config
  // has no such node (or no nodes at all).
  NodeEventLoopFactory* GetNodeEventLoopFactory(const Node* node);
  NodeEventLoopFactory* GetNodeEventLoopFactory(std::string_view node_name);
  // The config's nodes in its order; {nullptr} in a single-node config.
  const std::vector<const Node*>& nodes() const { return nodes_; }

  // Each run first starts the nodes not started yet (their OnStartup
  // callbacks, in the order given; see NodeEventLoopFactory) and runs
  // OnStartup callbacks added since the last run, then starts the loops made
  // since (OnRun callbacks).
  //
  // A loop is running (is_running()) only while a run lasts, as in AOS:
  // between runs, senders, fetchers, watchers, timers and phased loops may
  // be made on it (a watcher sees what is sent from then on; a phased loop
  // is first called at its first boundary after it was made). Its OnRun
  // callbacks run once, in the run it starts in; OnRun and the loop's
  // settings abort once it has started (event_loop.h).
  //
  // Runs every loop for exactly `duration` of simulated time: every event
  // due at or before now + `duration` runs, and then the time is exactly
  // that (unless Exit() ended the run first).
  void RunFor(monotonic_clock::duration duration);

  // AOS's RunUntil: runs until `time` on `node`'s realtime clock (`node` as
  // for MakeEventLoop). Every event due at or before `time` runs (the end is
  // inclusive), and then the node's realtime_now() is exactly `time`. An
  // end time already past runs nothing and leaves the time alone (AOS would
  // set its clocks back). Returns kEventsRemaining if it ran to `time`, and
  // kFinishedEventProcessing if Exit() ended it first (as in AOS: "events
  // remaining" is said even if nothing is left to do). As after RunFor(), an
  // ExitHandle's status is returned by the next Run().
  enum class RunEndState {
    kEventsRemaining,
    kFinishedEventProcessing,
  };
  RunEndState RunUntil(realtime_clock::time_point time,
                       const Node* node = nullptr);

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

  // AOS's send delay: a message sent on a node reaches that node's watchers
  // `send_delay` after its send time (their wakeup latency includes it;
  // a wakeup delay comes on top). Fetchers see it at once, as in AOS. A
  // forwarded message leaves its node when a watcher there would see it, so
  // it arrives send_delay + the link's delay after the send, and the
  // destination's watchers see it send_delay after that. Default 0 (AOS's
  // is kAosSendDelay). Applies to messages sent from then on; may be called
  // at any time, also from a handler. A negative delay aborts.
  void set_send_delay(std::chrono::nanoseconds send_delay);
  std::chrono::nanoseconds send_delay() const { return send_delay_; }

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
  // a restarted machine has. A reboot ends every process on the node: if
  // the node started, its OnShutdown callbacks run and its applications
  // (AlwaysStart/MaybeStart) are destroyed; any other loop of the node must
  // be gone by then (destroy it before, or in an OnShutdown callback), else
  // it aborts naming the loop. Then, if the node had started, it starts
  // again at once: its OnStartup callbacks run, and the loops they make
  // start running now if a run is under way, else at the next run. Messages
  // already on the network still arrive. Never from a callback of one of
  // the node's own loops (it would destroy the loop under its callback).
  UUID boot_uuid(const Node* node) const;
  void RebootNode(const Node* node);

  // The message bridge's publications (simulated_network.h): on every node
  // whose configuration has the bridge's statistics channels, an
  // application "message_bridge" starts with the node (on every boot) and
  // publishes ServerStatistics, ClientStatistics and remote timestamps as
  // the bridge does. DisableStatistics() (AOS's name) keeps it from
  // starting on the nodes that start from then on: call it before the first
  // run for none at all (as the log replayer does: the log has the real
  // bridge's).
  void DisableStatistics() { statistics_enabled_ = false; }

  monotonic_clock::time_point monotonic_now(const Node* node = nullptr) const;
  realtime_clock::time_point realtime_now(const Node* node = nullptr) const;

  const Configuration* configuration() const { return configuration_; }

 private:
  friend class NodeEventLoopFactory;
  friend class SimulatedEventLoop;
  friend class SimulatedWatcher;

  struct NodeClock {
    monotonic_clock::duration monotonic_offset =
        monotonic_clock::duration::zero();
    realtime_clock::duration realtime_offset;
  };

  SimulatedChannel* GetSimulatedChannel(const Channel* channel,
                                        const Node* node);
  // Aborts, naming `who`, unless `node` fits the config (see MakeEventLoop).
  void CheckNode(const Node* node, std::string_view who) const;
  // Schedules `watcher` of a loop on `node` for a message sent there at
  // `sent` (node time): send_delay() later.
  void ScheduleWatcher(EventScheduler::Event* watcher, const Node* node,
                       monotonic_clock::time_point sent);
  // Starts what a run starts (see RunFor), and ends a run.
  void BeginRun();
  void EndRun();
  // Starts the loops not started yet: all, or only those on `only_node`.
  void StartPendingLoops(std::optional<const Node*> only_node = std::nullopt);
  // Aborts if `node` has a loop: `setter` would change its clock under it.
  void CheckNoLoopOn(const Node* node, std::string_view setter) const;
  NodeClock& Clock(const Node* node);
  const NodeClock& Clock(const Node* node) const;

  const Configuration* const configuration_;
  EventScheduler scheduler_;
  std::chrono::nanoseconds send_delay_ = std::chrono::nanoseconds(0);
  // True from the start of a RunFor()/RunUntil()/Run() to its end.
  bool running_ = false;
  // Exit() was called during the current run (or before it).
  bool exit_requested_ = false;
  // The first status an ExitHandle gave, for Run() to return.
  std::optional<absl::Status> exit_status_;
  // Whether nodes start their NodeBridge (DisableStatistics).
  bool statistics_enabled_ = true;
  // Mutable: a node's boot is made when first asked for.
  mutable SimulatedNetwork network_;
  std::map<const Node*, NodeClock> clocks_;
  std::map<std::pair<const Node*, const Channel*>,
           std::unique_ptr<SimulatedChannel>>
      channels_;
  std::vector<SimulatedEventLoop*> loops_;
  std::vector<const Node*> nodes_;
  // One per entry of nodes_, in its order. Last: destroyed first, while the
  // channels their applications use still exist.
  std::vector<std::unique_ptr<NodeEventLoopFactory>> node_factories_;
};

// One node of a simulation (AOS's NodeEventLoopFactory): its loops, its
// clocks, its life (start, shutdown, reboot) and the applications that live
// and die with it. A view of the SimulatedEventLoopFactory that owns it:
// clocks, boots and links are the factory's, so a call here and the
// factory's call for this node are the same thing.
//
//   aos::NodeEventLoopFactory* pi1 = factory.GetNodeEventLoopFactory("pi1");
//   pi1->OnStartup([pi1]() { pi1->AlwaysStart<Ping>("ping", "/test"); });
//   pi1->OnShutdown([]() { /* Ping is destroyed right after this */ });
//
// Life: a node starts at the first RunFor()/RunUntil()/Run() of the factory
// (at the simulated time then, normally 0): its OnStartup callbacks run,
// then the loops made so far (those callbacks' included) start running. A
// reboot (SimulatedEventLoopFactory::RebootNode) shuts it down (OnShutdown
// callbacks, then its applications are destroyed, newest first) and starts
// it again (OnStartup callbacks). Destroying the factory shuts every started
// node down.
//
// Applications: AlwaysStart<Main>(name, args...) makes an event loop called
// `name` on this node and a `Main(EventLoop*, args...)` on it, now, and
// keeps both until Stop(), the node's shutdown or the factory's end. To
// have one on every boot, start it in an OnStartup callback (as in AOS).
//
// Not thread-safe, like the factory. Allocates (setup only).
class NodeEventLoopFactory {
 public:
  NodeEventLoopFactory(const NodeEventLoopFactory&) = delete;
  NodeEventLoopFactory& operator=(const NodeEventLoopFactory&) = delete;
  ~NodeEventLoopFactory();

  // This node; null in a single-node config.
  const Node* node() const { return node_; }
  const Configuration* configuration() const;

  // A new event loop called `name` on this node: the factory's
  // MakeEventLoop(name, node()), with the same contract. AOS's options
  // (sent-too-fast checks, exclusive senders) are not offered.
  std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name);

  // The node's clocks (the factory's monotonic_now(node()) and
  // realtime_now(node())), and its boot.
  monotonic_clock::time_point monotonic_now() const;
  realtime_clock::time_point realtime_now() const;
  UUID boot_uuid() const;
  // How many times the node has rebooted: 0 on its first boot (AOS's
  // boot index).
  size_t boot_count() const { return boot_count_; }

  // AOS's: makes realtime_now() read `realtime_now` when monotonic_now()
  // reads `monotonic_now` (the factory's SetRealtimeOffset(node(), the
  // difference), with its contract: before any loop of the node is made).
  void SetRealtimeOffset(monotonic_clock::time_point monotonic_now,
                         realtime_clock::time_point realtime_now);
  // realtime_now() - monotonic_now(), as durations since the epochs.
  std::chrono::nanoseconds realtime_offset() const;

  // The factory's send delay (set it there: it is one for all nodes).
  std::chrono::nanoseconds send_delay() const;

  // `fn` runs each time the node starts (see "Life" above), after the
  // callbacks added before it, with the loops made so far not yet running.
  // Added once the node started, it also runs once at the start of the
  // next run. May be called before a run, between runs, or during a
  // shutdown (from an OnShutdown callback); from a callback while the node
  // runs it aborts (as in AOS): there is no start to run it at.
  void OnStartup(std::function<void()> fn);
  // `fn` runs each time the node shuts down (a reboot, or the factory's
  // end, if the node started), in the order added, before the node's
  // applications are destroyed. May be called at any time.
  void OnShutdown(std::function<void()> fn);

  // Starts application `name` if the config says it runs on this node: the
  // config has an application called `name` and, in a multi-node config,
  // it lists this node or no nodes at all (AOS aborts on the latter).
  // Returns the application as AlwaysStart does, or null (nothing made).
  template <class Main, class... Args>
  Main* MaybeStart(std::string_view name, Args&&... args);
  // Makes an event loop called `name` on this node and a Main(loop, args...)
  // on it, now; see "Applications" above. Returns the Main, owned by this
  // node factory; valid until Stop(), the node's shutdown or the factory's
  // end. Its loop starts running as MakeEventLoop's do.
  template <class Main, class... Args>
  Main* AlwaysStart(std::string_view name, Args&&... args);
  // Destroys `application` (from AlwaysStart/MaybeStart on this node) and
  // its loop; nothing if it is not one (already stopped, as in AOS). Never
  // from one of the application's own callbacks.
  template <class Main>
  void Stop(Main* application) {
    StopApplication(static_cast<const void*>(application));
  }

  // Stops forwarding messages from this node to `other` (AOS's): the
  // factory's DisconnectLink(node(), other). Only that direction.
  void Disconnect(const Node* other);
  // Forwards again: the factory's ConnectLink(node(), other).
  void Connect(const Node* other);

 private:
  friend class SimulatedEventLoopFactory;

  // An application, its type erased so that one list holds them all.
  class AnyApplication {
   public:
    virtual ~AnyApplication() = default;
    virtual const void* main() const = 0;
  };
  template <class Main>
  class TypedApplication final : public AnyApplication {
   public:
    template <class... Args>
    explicit TypedApplication(std::unique_ptr<EventLoop> loop, Args&&... args)
        : loop_(std::move(loop)),
          main_(loop_.get(), std::forward<Args>(args)...) {}
    Main* get() { return &main_; }
    const void* main() const override { return &main_; }

   private:
    // Declared first: the Main is destroyed before the loop it runs on.
    std::unique_ptr<EventLoop> loop_;
    Main main_;
  };

  NodeEventLoopFactory(SimulatedEventLoopFactory* factory, const Node* node);

  // Whether the config says application `name` runs on this node.
  bool ConfiguredToRun(std::string_view name) const;
  void StopApplication(const void* main);
  // Runs the OnStartup callbacks not yet run on this boot; the node is then
  // started.
  void RunStartups();
  // OnShutdown callbacks if it started, then the applications are
  // destroyed, newest first. Returns whether it had started.
  bool Shutdown();

  SimulatedEventLoopFactory* const factory_;
  const Node* const node_;
  bool started_ = false;
  size_t boot_count_ = 0;
  std::vector<std::function<void()>> on_startup_;
  // How many of on_startup_ ran on this boot.
  size_t startups_run_ = 0;
  std::vector<std::function<void()>> on_shutdown_;
  std::vector<std::unique_ptr<AnyApplication>> applications_;
};

template <class Main, class... Args>
Main* NodeEventLoopFactory::MaybeStart(std::string_view name, Args&&... args) {
  if (!ConfiguredToRun(name)) return nullptr;
  return AlwaysStart<Main>(name, std::forward<Args>(args)...);
}

template <class Main, class... Args>
Main* NodeEventLoopFactory::AlwaysStart(std::string_view name, Args&&... args) {
  auto application = std::make_unique<TypedApplication<Main>>(
      MakeEventLoop(name), std::forward<Args>(args)...);
  Main* const main = application->get();
  applications_.push_back(std::move(application));
  return main;
}

}  // namespace aos

#endif  // AOS_EVENTS_SIMULATED_EVENT_LOOP_H_
