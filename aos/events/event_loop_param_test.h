#ifndef AOS_EVENTS_EVENT_LOOP_PARAM_TEST_H_
#define AOS_EVENTS_EVENT_LOOP_PARAM_TEST_H_

// The conformance suite every EventLoop implementation must pass. An
// implementation provides an EventLoopTestFactory and instantiates the suite:
//
//   INSTANTIATE_TEST_SUITE_P(Simulated, AbstractEventLoopTest,
//                            ::testing::Values(MakeSimulatedTestFactory));
//
// Real loops run the suite too, on machines that may deschedule any handler,
// or the whole loop, for any time. So every assertion holds however late a
// real loop runs: the tests assert behaviour (order, counts, the grid a
// repeating timer or phased loop keeps, and where it continues given when
// its handler really returned, read with monotonic_now()), and a test ends
// on the events it waits for, with a generous deadline that fails. A timer
// that ends a test comes due after everything the test waits for, and
// timers that are due together run in the order they came due (every
// implementation must: TimersDueTogetherRunInTheOrderTheyCameDue), so however
// late the loop runs it cannot cut the test short. Exact times and counts,
// which hold only if nothing runs late, are asserted only where
// time_is_simulated(); more of them are in simulated_event_loop_test.cc.
//
// The suite holds AOS's own conformance suite (its event_loop_param_test.cc),
// in our words: a test that checks what one of AOS's cases checks says so in
// a line `// AOS: <case>` above it. docs/porting_from_aos_suite.md lists
// every AOS case and where it went (or why it did not).

#include <functional>
#include <memory>
#include <string_view>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/flatbuffers.h"
#include "gtest/gtest.h"

namespace aos::testing {

// Runs event loops of one implementation on the suite's configuration:
// /aos (aos.timing.Report), /test (aos.testing.TestMessage and TestReply),
// /slow (TestMessage, 2 messages per 1 s, to send too fast), /lossy (2
// messages per 100 ms, to fall behind), /odd (max_size 29), /long (1000
// messages per 10 s). EnableNodes() switches to a two-node configuration.
class EventLoopTestFactory {
 public:
  EventLoopTestFactory();
  virtual ~EventLoopTestFactory();

  // A loop on my_node() that runs whenever Run() or RunFor() runs.
  virtual std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name) = 0;
  // A loop on my_node() that a real implementation never runs (AOS's
  // Make(), beside its MakePrimary()): for senders and fetchers the test
  // uses outside Run() or from the running loops' callbacks, in their
  // thread. A simulated one may run with the others (it is the same
  // thread).
  virtual std::unique_ptr<EventLoop> MakeIdleEventLoop(
      std::string_view name) = 0;
  // Runs every loop made so far until one calls Exit() (or an ExitHandle
  // does); returns the status an ExitHandle gave, OK otherwise. May be
  // called again (as AOS's Run()).
  virtual RunStatus Run() = 0;
  // Ends Run() with a status, from any thread (AOS's ExitHandle).
  virtual std::unique_ptr<ExitHandle> MakeExitHandle() = 0;
  // Runs every loop made so far for `duration`.
  virtual void RunFor(monotonic_clock::duration duration) = 0;
  // Makes the running handler take `duration` (sleeps, or advances simulated
  // time); outside Run(), time passes before the loops start. A real loop's
  // handler may take longer.
  virtual void Stall(monotonic_clock::duration duration) = 0;
  // True if the loops run on simulated time: nothing runs late, and a
  // handler takes exactly what Stall() says, so exact times may be asserted.
  virtual bool time_is_simulated() const = 0;

  // Switches to the suite's two-node configuration, before any loop is
  // made; loops are made on node `my_node` ("me" or "them") from then on.
  // Its nodes: "me" sends /test (TestMessage) and its timing reports
  // (/aos, mapped to /me/aos); "them" sends /test_forward (forwarded to
  // "me") and /test_noforward (read nowhere else), and /them/aos.
  void EnableNodes(std::string_view my_node);

  const Configuration* configuration() const { return &config_.message(); }
  // Null in the single-node configuration.
  const Node* my_node() const { return my_node_; }

 protected:
  // The configuration changed (EnableNodes): an implementation that holds
  // it re-reads it.
  virtual void OnConfigurationChanged() {}

 private:
  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* my_node_ = nullptr;
};

using EventLoopTestFactoryMaker =
    std::function<std::unique_ptr<EventLoopTestFactory>()>;

class AbstractEventLoopTest
    : public ::testing::TestWithParam<EventLoopTestFactoryMaker> {
 protected:
  AbstractEventLoopTest() : factory_(GetParam()()) {}

  std::unique_ptr<EventLoop> Make(std::string_view name) {
    return factory_->MakeEventLoop(name);
  }
  std::unique_ptr<EventLoop> MakeIdle(std::string_view name) {
    return factory_->MakeIdleEventLoop(name);
  }
  RunStatus Run() { return factory_->Run(); }
  void RunFor(monotonic_clock::duration duration) {
    factory_->RunFor(duration);
  }
  bool time_is_simulated() const { return factory_->time_is_simulated(); }
  void EnableNodes(std::string_view my_node) { factory_->EnableNodes(my_node); }
  const Configuration* configuration() const {
    return factory_->configuration();
  }

  std::unique_ptr<EventLoopTestFactory> factory_;
};

// Death tests fork; keep them in a suite of their own.
using AbstractEventLoopDeathTest = AbstractEventLoopTest;

}  // namespace aos::testing

#endif  // AOS_EVENTS_EVENT_LOOP_PARAM_TEST_H_
