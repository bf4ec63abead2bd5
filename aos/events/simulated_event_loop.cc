#include "aos/events/simulated_event_loop.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "aos/configuration.h"
#include "aos/configuration_maps.h"
#include "aos/events/simulated_channel.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos {
namespace {

// Bytes of known pattern on each side of a sender's buffer; a builder or
// memcpy that strays outside max_size breaks it (kInvalidRedzone).
constexpr size_t kRedzone = 64;
constexpr uint8_t kRedzonePattern = 0xa5;

}  // namespace

class SimulatedEventLoop : public EventLoop {
 public:
  SimulatedEventLoop(SimulatedEventLoopFactory* factory, std::string_view name,
                     const Node* node)
      : EventLoop(name, factory->configuration(), node), factory_(factory) {
    factory_->loops_.push_back(this);
    // In memory: the simulation's rings are for its own tests and tools.
    AskForTraceRing("");
  }

  ~SimulatedEventLoop() override {
    // Timers and watchers deschedule themselves; destroy them while this
    // loop's members still exist.
    DestroyHandlers();
    std::erase(factory_->loops_, this);
  }

  monotonic_clock::time_point monotonic_now() const override {
    return factory_->monotonic_now(node());
  }
  realtime_clock::time_point realtime_now() const override {
    return factory_->realtime_now(node());
  }

  void Exit() override { factory_->Exit(); }

  UUID boot_uuid() const override { return factory_->boot_uuid(node()); }

  bool started() const { return started_; }
  // Readies watchers; then StartRunningForFactory() runs OnRun callbacks.
  void Start();
  void StartRunningForFactory() { StartRunning(); }
  // Between the factory's runs a started loop is not running (AOS's
  // SetIsRunning): it may be set up further.
  void ResumeRunningForFactory() { ResumeRunning(); }
  void StopRunningForFactory() { StopRunning(); }

  EventScheduler* scheduler() { return &factory_->scheduler_; }
  SimulatedEventLoopFactory* factory() { return factory_; }

  // Node time -> the scheduler's time.
  monotonic_clock::time_point ToSchedulerTime(
      monotonic_clock::time_point node_time) const {
    return node_time - factory_->Clock(node()).monotonic_offset;
  }

  using EventLoop::set_context;

 protected:
  std::unique_ptr<RawSender> DoMakeRawSender(const Channel* channel) override;
  std::unique_ptr<RawFetcher> DoMakeRawFetcher(const Channel* channel) override;
  std::unique_ptr<WatcherState> DoMakeWatcher(
      const Channel* channel,
      std::function<void(const Context&, const void*)> watcher) override;
  std::unique_ptr<TimerHandler> DoMakeTimer(std::function<void()> fn) override;

 private:
  SimulatedEventLoopFactory* const factory_;
  bool started_ = false;
  // Watchers created here, to start them when the loop starts.
  std::vector<class SimulatedWatcher*> simulated_watchers_;
  friend class SimulatedWatcher;
};

class SimulatedSender : public RawSender {
 public:
  SimulatedSender(SimulatedEventLoop* event_loop, const Channel* channel,
                  SimulatedChannel* simulated_channel)
      : RawSender(event_loop, channel),
        loop_(event_loop),
        simulated_channel_(simulated_channel),
        buffer_(
            kRedzone + configuration::MessageBufferSize(*channel) + kRedzone,
            kRedzonePattern) {}

  void* data() override { return buffer_.data() + kRedzone; }
  size_t size() override {
    return configuration::MessageBufferSize(*simulated_channel_->channel());
  }

 protected:
  Error DoSend(size_t length, const RemoteOrigin* remote,
               const PathOrigins* path_origins) override {
    if (!RedzonesIntact()) {
      std::fill(buffer_.begin(), buffer_.begin() + kRedzone, kRedzonePattern);
      std::fill(buffer_.end() - kRedzone, buffer_.end(), kRedzonePattern);
      return Error::kInvalidRedzone;
    }
    const monotonic_clock::time_point monotonic_now = loop_->monotonic_now();
    const realtime_clock::time_point realtime_now = loop_->realtime_now();
    uint32_t queue_index;
    RemoteOrigin origin;
    if (remote != nullptr) {
      origin = *remote;
    } else {
      origin.source_boot_uuid = loop_->boot_uuid();
    }
    const Error error = simulated_channel_->Send(
        static_cast<const uint8_t*>(data()) + size() - length, length,
        monotonic_now, realtime_now, origin, path_origins, &queue_index);
    if (error == Error::kOk) {
      monotonic_sent_time_ = monotonic_now;
      realtime_sent_time_ = realtime_now;
      sent_queue_index_ = queue_index;
    }
    return error;
  }

 private:
  bool RedzonesIntact() const {
    for (size_t i = 0; i < kRedzone; ++i) {
      if (buffer_[i] != kRedzonePattern ||
          buffer_[buffer_.size() - 1 - i] != kRedzonePattern) {
        return false;
      }
    }
    return true;
  }

  SimulatedEventLoop* const loop_;
  SimulatedChannel* const simulated_channel_;
  std::vector<uint8_t> buffer_;
};

class SimulatedFetcher : public RawFetcher {
 public:
  SimulatedFetcher(SimulatedEventLoop* event_loop, const Channel* channel,
                   SimulatedChannel* simulated_channel)
      : RawFetcher(event_loop, channel),
        simulated_channel_(simulated_channel),
        buffer_(configuration::MessageBufferSize(*channel)),
        // FetchNext() starts after what was sent before the fetcher was
        // made, as in AOS.
        next_(simulated_channel->next_queue_index()) {}

 protected:
  // Nothing here can be overwritten while it is looked at: a plain fetch
  // is a fetch whose predicate takes anything.
  FetchResult DoFetch() override {
    return DoFetchIf([](const Context&) { return true; });
  }

  FetchResult DoFetchNext() override {
    return DoFetchNextIf([](const Context&) { return true; });
  }

  FetchResult DoFetchIf(absl::FunctionRef<bool(const Context&)> fn) override {
    const uint32_t next = simulated_channel_->next_queue_index();
    if (next == 0) return {};
    const uint32_t latest = next - 1;
    if (context_.queue_index != Context::kInvalidQueueIndex &&
        context_.queue_index == latest) {
      return {};
    }
    return TakeIf(latest, fn, 0);
  }

  FetchResult DoFetchNextIf(
      absl::FunctionRef<bool(const Context&)> fn) override {
    uint32_t wanted = next_;
    if (wanted >= simulated_channel_->next_queue_index()) return {};
    uint32_t lost = 0;
    const uint32_t oldest = simulated_channel_->oldest_queue_index();
    if (wanted < oldest) {
      lost = oldest - wanted;
      wanted = oldest;
      next_ = oldest;
    }
    return TakeIf(wanted, fn, lost);
  }

 private:
  // Takes message `queue_index` if `fn`, shown its context without the
  // data, says so.
  FetchResult TakeIf(uint32_t queue_index,
                     absl::FunctionRef<bool(const Context&)> fn,
                     uint32_t lost) {
    Context peeked = simulated_channel_->At(queue_index).context;
    peeked.data = nullptr;
    if (!fn(peeked)) return {.fetched = false, .lost = lost};
    Take(queue_index);
    return {.fetched = true, .lost = lost};
  }

  // Copies the message so it stays valid however the channel moves on.
  void Take(uint32_t queue_index) {
    const SimulatedChannel::Slot& slot = simulated_channel_->At(queue_index);
    memcpy(buffer_.data(), slot.context.data, slot.context.size);
    context_ = slot.context;
    context_.data = buffer_.data();
    next_ = queue_index + 1;
  }

  SimulatedChannel* const simulated_channel_;
  std::vector<uint8_t> buffer_;
  // What FetchNext() reads next.
  uint32_t next_;
};

class SimulatedWatcher : public WatcherState, public EventScheduler::Event {
 public:
  SimulatedWatcher(SimulatedEventLoop* event_loop, const Channel* channel,
                   SimulatedChannel* simulated_channel,
                   std::function<void(const Context&, const void*)> fn)
      : WatcherState(event_loop, channel, std::move(fn)),
        loop_(event_loop),
        simulated_channel_(simulated_channel),
        buffer_(configuration::MessageBufferSize(*channel)) {
    event_loop->scheduler()->Reserve(1);
    simulated_channel_->AddWatcher(this);
    event_loop->simulated_watchers_.push_back(this);
  }

  ~SimulatedWatcher() override {
    loop_->scheduler()->Deschedule(this);
    simulated_channel_->RemoveWatcher(this);
    std::erase(loop_->simulated_watchers_, this);
  }

  // Delivers what is sent from now on.
  void Start() {
    next_queue_index_ = simulated_channel_->next_queue_index();
    started_ = true;
  }

  void Handle() override {
    if (!started_) return;
    const uint32_t end = simulated_channel_->next_queue_index();
    if (next_queue_index_ >= end) return;
    const uint32_t oldest = simulated_channel_->oldest_queue_index();
    if (next_queue_index_ < oldest) {
      AddLost(oldest - next_queue_index_);
      next_queue_index_ = oldest;
    }
    // Copy: the handler may send on this very channel and reuse the slot.
    const SimulatedChannel::Slot& slot =
        simulated_channel_->At(next_queue_index_);
    memcpy(buffer_.data(), slot.context.data, slot.context.size);
    Context context = slot.context;
    context.data = buffer_.data();
    ++next_queue_index_;
    if (next_queue_index_ < end) {
      loop_->factory()->ScheduleWatcher(
          this, loop_->node(),
          simulated_channel_->At(next_queue_index_)
              .context.monotonic_event_time);
    }
    Call(context);
  }

 private:
  SimulatedEventLoop* const loop_;
  SimulatedChannel* const simulated_channel_;
  std::vector<uint8_t> buffer_;
  uint32_t next_queue_index_ = 0;
  bool started_ = false;
};

class SimulatedTimer : public TimerHandler, public EventScheduler::Event {
 public:
  SimulatedTimer(SimulatedEventLoop* event_loop, std::function<void()> fn)
      : TimerHandler(event_loop, std::move(fn)), loop_(event_loop) {
    event_loop->scheduler()->Reserve(1);
  }

  ~SimulatedTimer() override { loop_->scheduler()->Deschedule(this); }

  void Schedule(monotonic_clock::time_point base,
                monotonic_clock::duration period) override {
    SetSchedule(base, period);
    loop_->scheduler()->Schedule(this, loop_->ToSchedulerTime(base));
  }

  void Disable() override {
    ClearSchedule();
    loop_->scheduler()->Deschedule(this);
  }

  bool IsDisabled() override { return !schedule_enabled(); }

  void Handle() override {
    const DueCall call = RunDueCall();
    if (call.next.has_value()) {
      loop_->scheduler()->Schedule(this, loop_->ToSchedulerTime(*call.next));
    }
  }

 private:
  SimulatedEventLoop* const loop_;
};

std::unique_ptr<RawSender> SimulatedEventLoop::DoMakeRawSender(
    const Channel* channel) {
  return std::make_unique<SimulatedSender>(
      this, channel, factory_->GetSimulatedChannel(channel, node()));
}

std::unique_ptr<RawFetcher> SimulatedEventLoop::DoMakeRawFetcher(
    const Channel* channel) {
  return std::make_unique<SimulatedFetcher>(
      this, channel, factory_->GetSimulatedChannel(channel, node()));
}

std::unique_ptr<WatcherState> SimulatedEventLoop::DoMakeWatcher(
    const Channel* channel,
    std::function<void(const Context&, const void*)> watcher) {
  auto made = std::make_unique<SimulatedWatcher>(
      this, channel, factory_->GetSimulatedChannel(channel, node()),
      std::move(watcher));
  // Made between runs: Start() has readied the others already.
  if (started_) made->Start();
  return made;
}

std::unique_ptr<TimerHandler> SimulatedEventLoop::DoMakeTimer(
    std::function<void()> fn) {
  return std::make_unique<SimulatedTimer>(this, std::move(fn));
}

void SimulatedEventLoop::Start() {
  started_ = true;
  for (SimulatedWatcher* watcher : simulated_watchers_) watcher->Start();
}

// SimulatedEventLoopFactory.

SimulatedEventLoopFactory::SimulatedEventLoopFactory(
    const Configuration* configuration)
    : configuration_(configuration),
      network_(
          configuration, &scheduler_,
          [this](const Node* node) { return Clock(node).monotonic_offset; },
          [this](const Node* node) { return realtime_now(node); },
          [this](const Channel* channel, const Node* node) {
            return GetSimulatedChannel(channel, node);
          },
          [this]() { return send_delay_; }) {
  CHECK(configuration != nullptr);
  if (configuration::MultiNode(*configuration)) {
    for (const Node* node : *configuration->nodes()) nodes_.push_back(node);
  } else {
    nodes_.push_back(nullptr);
  }
  for (const Node* node : nodes_) {
    // The constructor is private to the factories.
    node_factories_.push_back(std::unique_ptr<NodeEventLoopFactory>(
        new NodeEventLoopFactory(this, node)));
  }
  // What the message bridge publishes, on each boot of each node that has
  // its channels (simulated_network.h).
  for (const std::unique_ptr<NodeEventLoopFactory>& node : node_factories_) {
    NodeEventLoopFactory* const each = node.get();
    if (!network_.PublishesStatistics(each->node())) continue;
    each->OnStartup([this, each]() {
      if (!statistics_enabled_) return;
      each->AlwaysStart<SimulatedNetwork::NodeBridge>("message_bridge",
                                                      &network_);
    });
  }
}

SimulatedEventLoopFactory::~SimulatedEventLoopFactory() {
  // The end of every process: applications go, other loops must be gone.
  for (std::unique_ptr<NodeEventLoopFactory>& node : node_factories_) {
    node->Shutdown();
  }
  CHECK(loops_.empty()) << "destroy every event loop before their "
                           "SimulatedEventLoopFactory ("
                        << loops_.size() << " left, e.g. "
                        << loops_.front()->name() << ")";
}

SimulatedEventLoopFactory::NodeClock& SimulatedEventLoopFactory::Clock(
    const Node* node) {
  auto it = clocks_.find(node);
  if (it == clocks_.end()) {
    NodeClock clock;
    // 2026-01-01T00:00:00Z, so realtime looks like a date.
    clock.realtime_offset = std::chrono::seconds(1767225600);
    it = clocks_.emplace(node, clock).first;
  }
  return it->second;
}

const SimulatedEventLoopFactory::NodeClock& SimulatedEventLoopFactory::Clock(
    const Node* node) const {
  static const NodeClock kDefault = [] {
    NodeClock clock;
    clock.realtime_offset = std::chrono::seconds(1767225600);
    return clock;
  }();
  auto it = clocks_.find(node);
  return it == clocks_.end() ? kDefault : it->second;
}

void SimulatedEventLoopFactory::CheckNode(const Node* node,
                                          std::string_view who) const {
  if (configuration::MultiNode(*configuration_)) {
    CHECK(node != nullptr) << who
                           << ": this is a multi-node config; give a node";
    CHECK(configuration::GetNode(*configuration_,
                                 node->name()->string_view()) == node)
        << who << ": node " << node->name()->string_view()
        << " is not from this factory's configuration";
  } else {
    CHECK(node == nullptr) << who << ": this config has no nodes; pass no node";
  }
}

NodeEventLoopFactory* SimulatedEventLoopFactory::GetNodeEventLoopFactory(
    const Node* node) {
  CheckNode(node, "GetNodeEventLoopFactory");
  const auto it = std::find(nodes_.begin(), nodes_.end(), node);
  return node_factories_[it - nodes_.begin()].get();
}

NodeEventLoopFactory* SimulatedEventLoopFactory::GetNodeEventLoopFactory(
    std::string_view node_name) {
  const Node* node = nullptr;
  if (configuration::MultiNode(*configuration_)) {
    node = configuration::GetNode(*configuration_, node_name);
  }
  if (node == nullptr) {
    std::string known;
    for (const Node* each : nodes_) {
      if (each == nullptr) continue;
      known += StrCat(known.empty() ? "" : ", ", each->name()->string_view());
    }
    LOG(FATAL) << "GetNodeEventLoopFactory(\"" << node_name
               << "\"): the config has no such node ("
               << (known.empty() ? "it has no nodes: pass no node"
                                 : StrCat("its nodes: ", known))
               << ")";
  }
  return GetNodeEventLoopFactory(node);
}

std::unique_ptr<EventLoop> SimulatedEventLoopFactory::MakeEventLoop(
    std::string_view name, const Node* node) {
  CheckNode(node, StrCat("event loop ", name));
  Clock(node);      // Fix the clock before anything is scheduled.
  boot_uuid(node);  // And the boot, so that sends never allocate.
  return std::make_unique<SimulatedEventLoop>(this, name, node);
}

SimulatedChannel* SimulatedEventLoopFactory::GetSimulatedChannel(
    const Channel* channel, const Node* node) {
  auto& simulated = channels_[{node, channel}];
  if (simulated == nullptr) {
    simulated = std::make_unique<SimulatedChannel>(configuration_, channel);
    simulated->set_watcher_wakeup(
        [this, node](EventScheduler::Event* watcher,
                     monotonic_clock::time_point node_time) {
          ScheduleWatcher(watcher, node, node_time);
        });
    SimulatedChannel* const made = simulated.get();
    if (node != nullptr && channel->source_node() != nullptr &&
        channel->source_node()->string_view() == node->name()->string_view()) {
      network_.ForwardFrom(channel, node, made);
    }
    return made;
  }
  return simulated.get();
}

void SimulatedEventLoopFactory::ScheduleWatcher(
    EventScheduler::Event* watcher, const Node* node,
    monotonic_clock::time_point sent) {
  scheduler_.Schedule(watcher,
                      sent - Clock(node).monotonic_offset + send_delay_);
}

void SimulatedEventLoopFactory::StartPendingLoops(
    std::optional<const Node*> only_node) {
  std::vector<SimulatedEventLoop*> starting;
  for (SimulatedEventLoop* loop : loops_) {
    if (loop->started()) continue;
    if (only_node.has_value() && loop->node() != *only_node) continue;
    starting.push_back(loop);
  }
  // Watchers first, so messages sent by any OnRun callback are delivered.
  for (SimulatedEventLoop* loop : starting) loop->Start();
  for (SimulatedEventLoop* loop : starting) loop->StartRunningForFactory();
}

void SimulatedEventLoopFactory::BeginRun() {
  running_ = true;
  for (std::unique_ptr<NodeEventLoopFactory>& node : node_factories_) {
    node->RunStartups();
  }
  for (SimulatedEventLoop* loop : loops_) {
    if (loop->started()) loop->ResumeRunningForFactory();
  }
  StartPendingLoops();
}

void SimulatedEventLoopFactory::EndRun() {
  running_ = false;
  exit_requested_ = false;
  for (SimulatedEventLoop* loop : loops_) {
    if (loop->started()) loop->StopRunningForFactory();
  }
}

void SimulatedEventLoopFactory::RunFor(monotonic_clock::duration duration) {
  BeginRun();
  scheduler_.RunFor(duration);
  EndRun();
}

SimulatedEventLoopFactory::RunEndState SimulatedEventLoopFactory::RunUntil(
    realtime_clock::time_point time, const Node* node) {
  CheckNode(node, "RunUntil");
  const NodeClock& clock = Clock(node);
  // The node's realtime -> its monotonic time -> the scheduler's time.
  const monotonic_clock::time_point end(
      time.time_since_epoch() - clock.realtime_offset - clock.monotonic_offset);
  BeginRun();
  if (end >= scheduler_.now()) {
    scheduler_.RunFor(end - scheduler_.now());
  } else if (exit_requested_) {
    // Nothing to run, but the scheduler still holds the Exit(): a zero
    // run takes it (and runs nothing, since it exits first).
    scheduler_.RunFor(monotonic_clock::duration::zero());
  }
  const bool exited = exit_requested_;
  EndRun();
  return exited ? RunEndState::kFinishedEventProcessing
                : RunEndState::kEventsRemaining;
}

RunStatus SimulatedEventLoopFactory::Run() {
  BeginRun();
  scheduler_.Run();
  EndRun();
  absl::Status status = exit_status_.value_or(absl::OkStatus());
  exit_status_.reset();
  return status;
}

void SimulatedEventLoopFactory::Exit() {
  exit_requested_ = true;
  scheduler_.Exit();
}

namespace {

class SimulatedExitHandle : public ExitHandle {
 public:
  SimulatedExitHandle(SimulatedEventLoopFactory* factory,
                      std::optional<absl::Status>* status)
      : factory_(factory), status_(status) {}
  void Exit(absl::Status status) override {
    if (!status_->has_value()) *status_ = std::move(status);
    factory_->Exit();
  }

 private:
  SimulatedEventLoopFactory* const factory_;
  std::optional<absl::Status>* const status_;
};

}  // namespace

std::unique_ptr<ExitHandle> SimulatedEventLoopFactory::MakeExitHandle() {
  return std::make_unique<SimulatedExitHandle>(this, &exit_status_);
}

void SimulatedEventLoopFactory::SetWakeupDelay(
    monotonic_clock::duration delay) {
  scheduler_.set_wakeup_delay(delay);
}

void SimulatedEventLoopFactory::AdvanceTime(
    monotonic_clock::duration duration) {
  scheduler_.AdvanceTime(duration);
}

void SimulatedEventLoopFactory::set_send_delay(
    std::chrono::nanoseconds send_delay) {
  CHECK_GE(send_delay.count(), 0)
      << "set_send_delay: a send delay cannot be negative";
  send_delay_ = send_delay;
}

void SimulatedEventLoopFactory::CheckNoLoopOn(const Node* node,
                                              std::string_view setter) const {
  for (SimulatedEventLoop* loop : loops_) {
    CHECK(loop->node() != node)
        << setter << ": node already has event loop " << loop->name();
  }
}

void SimulatedEventLoopFactory::SetMonotonicOffset(
    const Node* node, monotonic_clock::duration offset) {
  CheckNoLoopOn(node, "SetMonotonicOffset");
  Clock(node).monotonic_offset = offset;
}

void SimulatedEventLoopFactory::SetRealtimeOffset(
    const Node* node, realtime_clock::duration offset) {
  CheckNoLoopOn(node, "SetRealtimeOffset");
  Clock(node).realtime_offset = offset;
}

void SimulatedEventLoopFactory::SetLinkDelay(const Node* from, const Node* to,
                                             monotonic_clock::duration delay) {
  network_.SetDelay(from, to, delay);
}

void SimulatedEventLoopFactory::SetLinkLoss(const Node* from, const Node* to,
                                            double loss) {
  network_.SetLoss(from, to, loss);
}

void SimulatedEventLoopFactory::DisconnectLink(const Node* from,
                                               const Node* to) {
  network_.Disconnect(from, to);
}

void SimulatedEventLoopFactory::ConnectLink(const Node* from, const Node* to) {
  network_.Connect(from, to);
}

SimulatedNetwork::LinkStatistics SimulatedEventLoopFactory::link_statistics(
    const Node* from, const Node* to) const {
  return network_.statistics(from, to);
}

UUID SimulatedEventLoopFactory::boot_uuid(const Node* node) const {
  return network_.boot_uuid(node);
}

void SimulatedEventLoopFactory::RebootNode(const Node* node) {
  NodeEventLoopFactory* const node_factory = GetNodeEventLoopFactory(node);
  // A reboot ends every process on the node.
  const bool was_started = node_factory->Shutdown();
  CheckNoLoopOn(node, "RebootNode (destroy the node's loops first)");
  for (auto& [key, channel] : channels_) {
    if (key.first == node) channel->Restart();
  }
  network_.Reboot(node);
  ++node_factory->boot_count_;
  // A node not started yet starts with the next run, like the others.
  if (was_started) {
    node_factory->RunStartups();
    if (running_) StartPendingLoops(node);
  }
}

monotonic_clock::time_point SimulatedEventLoopFactory::monotonic_now(
    const Node* node) const {
  return scheduler_.now() + Clock(node).monotonic_offset;
}

realtime_clock::time_point SimulatedEventLoopFactory::realtime_now(
    const Node* node) const {
  return realtime_clock::time_point(monotonic_now(node).time_since_epoch() +
                                    Clock(node).realtime_offset);
}

// NodeEventLoopFactory.

NodeEventLoopFactory::NodeEventLoopFactory(SimulatedEventLoopFactory* factory,
                                           const Node* node)
    : factory_(factory), node_(node) {}

NodeEventLoopFactory::~NodeEventLoopFactory() = default;

const Configuration* NodeEventLoopFactory::configuration() const {
  return factory_->configuration();
}

std::unique_ptr<EventLoop> NodeEventLoopFactory::MakeEventLoop(
    std::string_view name) {
  return factory_->MakeEventLoop(name, node_);
}

monotonic_clock::time_point NodeEventLoopFactory::monotonic_now() const {
  return factory_->monotonic_now(node_);
}

realtime_clock::time_point NodeEventLoopFactory::realtime_now() const {
  return factory_->realtime_now(node_);
}

UUID NodeEventLoopFactory::boot_uuid() const {
  return factory_->boot_uuid(node_);
}

void NodeEventLoopFactory::SetRealtimeOffset(
    monotonic_clock::time_point monotonic_now,
    realtime_clock::time_point realtime_now) {
  factory_->SetRealtimeOffset(node_, realtime_now.time_since_epoch() -
                                         monotonic_now.time_since_epoch());
}

std::chrono::nanoseconds NodeEventLoopFactory::realtime_offset() const {
  return realtime_now().time_since_epoch() - monotonic_now().time_since_epoch();
}

std::chrono::nanoseconds NodeEventLoopFactory::send_delay() const {
  return factory_->send_delay();
}

void NodeEventLoopFactory::OnStartup(std::function<void()> fn) {
  CHECK(!(factory_->running_ && started_))
      << "OnStartup on node "
      << (node_ == nullptr ? "(single node)" : node_->name()->string_view())
      << ": add startup callbacks before a run, between runs or in "
         "OnShutdown, not from a callback while the node runs";
  on_startup_.push_back(std::move(fn));
}

void NodeEventLoopFactory::OnShutdown(std::function<void()> fn) {
  on_shutdown_.push_back(std::move(fn));
}

void NodeEventLoopFactory::RunStartups() {
  while (startups_run_ < on_startup_.size()) {
    // A copy: the callback may add callbacks, moving the vector.
    const std::function<void()> fn = on_startup_[startups_run_++];
    fn();
  }
  started_ = true;
}

bool NodeEventLoopFactory::Shutdown() {
  const bool was_started = started_;
  if (was_started) {
    started_ = false;
    startups_run_ = 0;
    for (size_t i = 0; i < on_shutdown_.size(); ++i) {
      const std::function<void()> fn = on_shutdown_[i];
      fn();
    }
  }
  while (!applications_.empty()) applications_.pop_back();
  return was_started;
}

bool NodeEventLoopFactory::ConfiguredToRun(std::string_view name) const {
  const Application* application =
      configuration::GetApplication(*configuration(), name);
  if (application == nullptr) return false;
  if (node_ == nullptr || application->nodes() == nullptr ||
      application->nodes()->size() == 0) {
    return true;
  }
  for (const flatbuffers::String* each : *application->nodes()) {
    if (each->string_view() == node_->name()->string_view()) return true;
  }
  return false;
}

void NodeEventLoopFactory::StopApplication(const void* main) {
  std::erase_if(applications_,
                [main](const std::unique_ptr<AnyApplication>& application) {
                  return application->main() == main;
                });
}

void NodeEventLoopFactory::Disconnect(const Node* other) {
  factory_->DisconnectLink(node_, other);
}

void NodeEventLoopFactory::Connect(const Node* other) {
  factory_->ConnectLink(node_, other);
}

}  // namespace aos
