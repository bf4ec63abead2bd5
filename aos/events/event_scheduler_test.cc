#include "aos/events/event_scheduler.h"

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

class Recorder : public EventScheduler::Event {
 public:
  Recorder(std::string name, EventScheduler* scheduler,
           std::vector<std::string>* log)
      : name_(std::move(name)), scheduler_(scheduler), log_(log) {}
  void Handle() override {
    std::stringstream line;
    line << name_ << "@"
         << scheduler_->now().time_since_epoch().count() / 1000000;
    log_->push_back(line.str());
    if (on_handle) on_handle();
  }
  std::function<void()> on_handle;

 private:
  std::string name_;
  EventScheduler* scheduler_;
  std::vector<std::string>* log_;
};

TEST(EventSchedulerTest, RunsInTimeOrderThenScheduleOrder) {
  EventScheduler scheduler;
  std::vector<std::string> log;
  Recorder a("a", &scheduler, &log), b("b", &scheduler, &log),
      c("c", &scheduler, &log);
  scheduler.Reserve(3);
  scheduler.Schedule(&a, monotonic_clock::epoch() + milliseconds(5));
  scheduler.Schedule(&b, monotonic_clock::epoch() + milliseconds(1));
  scheduler.Schedule(&c, monotonic_clock::epoch() + milliseconds(5));
  scheduler.RunFor(milliseconds(10));
  EXPECT_THAT(log, ElementsAre("b@1", "a@5", "c@5"));
  EXPECT_EQ(scheduler.now(), monotonic_clock::epoch() + milliseconds(10));
}

TEST(EventSchedulerTest, RescheduleAndDeschedule) {
  EventScheduler scheduler;
  std::vector<std::string> log;
  Recorder a("a", &scheduler, &log), b("b", &scheduler, &log);
  scheduler.Reserve(2);
  scheduler.Schedule(&a, monotonic_clock::epoch() + milliseconds(1));
  scheduler.Schedule(&b, monotonic_clock::epoch() + milliseconds(2));
  scheduler.Schedule(&a, monotonic_clock::epoch() + milliseconds(3));
  EXPECT_EQ(scheduler.size(), 2u);
  scheduler.Deschedule(&b);
  EXPECT_FALSE(b.scheduled());
  scheduler.Deschedule(&b);
  scheduler.RunFor(milliseconds(10));
  EXPECT_THAT(log, ElementsAre("a@3"));
}

TEST(EventSchedulerTest, WakeupDelayAndAdvanceTimeMakeEventsLate) {
  EventScheduler scheduler;
  std::vector<std::string> log;
  Recorder slow("slow", &scheduler, &log), next("next", &scheduler, &log);
  scheduler.Reserve(2);
  slow.on_handle = [&]() { scheduler.AdvanceTime(milliseconds(4)); };
  scheduler.set_wakeup_delay(milliseconds(1));
  scheduler.Schedule(&slow, monotonic_clock::epoch() + milliseconds(1));
  scheduler.Schedule(&next, monotonic_clock::epoch() + milliseconds(2));
  scheduler.RunFor(milliseconds(10));
  // slow runs 1 ms late and takes 4 ms; next is due at 3 but runs at 6.
  EXPECT_THAT(log, ElementsAre("slow@2", "next@6"));
}

TEST(EventSchedulerTest, ExitStopsAfterTheCurrentEvent) {
  EventScheduler scheduler;
  std::vector<std::string> log;
  Recorder a("a", &scheduler, &log), b("b", &scheduler, &log);
  scheduler.Reserve(2);
  a.on_handle = [&]() { scheduler.Exit(); };
  scheduler.Schedule(&a, monotonic_clock::epoch() + milliseconds(1));
  scheduler.Schedule(&b, monotonic_clock::epoch() + milliseconds(2));
  scheduler.Run();
  EXPECT_THAT(log, ElementsAre("a@1"));
  EXPECT_TRUE(b.scheduled());
}

TEST(EventSchedulerDeathTest, SchedulingBeyondTheReservationAborts) {
  EventScheduler scheduler;
  std::vector<std::string> log;
  Recorder a("a", &scheduler, &log);
  EXPECT_DEATH(scheduler.Schedule(&a, monotonic_clock::epoch()),
               "more events scheduled than reserved");
}

}  // namespace
}  // namespace aos
