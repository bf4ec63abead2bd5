#include "aos/events/timer_schedule.h"

#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "aos/testing/allocation_counter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

class Named : public TimerSchedule::Entry {
 public:
  explicit Named(std::string name) : name(std::move(name)) {}
  const std::string name;
};

monotonic_clock::time_point At(int ms) {
  return monotonic_clock::epoch() + milliseconds(ms);
}

// Takes the entries out earliest first, as a loop runs them.
std::vector<std::string> Drain(TimerSchedule* schedule) {
  std::vector<std::string> order;
  while (TimerSchedule::Entry* entry = schedule->Earliest()) {
    order.push_back(static_cast<Named*>(entry)->name);
    schedule->Deschedule(entry);
  }
  return order;
}

TEST(TimerScheduleTest, EmptyHasNoEarliest) {
  TimerSchedule schedule;
  EXPECT_EQ(schedule.Earliest(), nullptr);
  EXPECT_EQ(schedule.size(), 0u);
}

TEST(TimerScheduleTest, EarliestTimeFirstThenTheOrderScheduled) {
  TimerSchedule schedule;
  Named a("a"), b("b"), c("c"), d("d");
  for (int i = 0; i < 4; ++i) schedule.Reserve();
  schedule.Schedule(&c, At(2));
  schedule.Schedule(&a, At(1));
  schedule.Schedule(&d, At(2));
  schedule.Schedule(&b, At(1));
  EXPECT_EQ(schedule.Earliest(), &a);
  EXPECT_EQ(a.time(), At(1));
  EXPECT_TRUE(a.scheduled());
  EXPECT_THAT(Drain(&schedule), ElementsAre("a", "b", "c", "d"));
  EXPECT_FALSE(a.scheduled());
}

TEST(TimerScheduleTest, RescheduledEntriesMoveAndGoBehindTheirEquals) {
  TimerSchedule schedule;
  Named a("a"), b("b"), c("c"), d("d");
  for (int i = 0; i < 4; ++i) schedule.Reserve();
  schedule.Schedule(&a, At(1));
  schedule.Schedule(&b, At(2));
  schedule.Schedule(&c, At(3));
  schedule.Schedule(&d, At(4));
  schedule.Schedule(&d, At(0));  // earlier
  schedule.Schedule(&a, At(5));  // later
  schedule.Schedule(&b, At(3));  // the same time as c, scheduled after it
  EXPECT_EQ(schedule.size(), 4u);
  EXPECT_THAT(Drain(&schedule), ElementsAre("d", "c", "b", "a"));
}

TEST(TimerScheduleTest, SchedulingAgainAtTheSameTimeGoesBehind) {
  TimerSchedule schedule;
  Named a("a"), b("b");
  schedule.Reserve();
  schedule.Reserve();
  schedule.Schedule(&a, At(1));
  schedule.Schedule(&b, At(1));
  schedule.Schedule(&a, At(1));
  EXPECT_THAT(Drain(&schedule), ElementsAre("b", "a"));
}

TEST(TimerScheduleTest, SequenceTellsWhatWasScheduledSince) {
  TimerSchedule schedule;
  Named a("a"), b("b");
  schedule.Reserve();
  schedule.Reserve();
  schedule.Schedule(&a, At(1));
  const uint64_t since = schedule.next_sequence();
  EXPECT_LT(a.sequence(), since);
  schedule.Schedule(&b, At(1));
  EXPECT_GE(b.sequence(), since);
  schedule.Schedule(&a, At(0));
  EXPECT_GE(a.sequence(), since);
  EXPECT_GT(a.sequence(), b.sequence());
}

TEST(TimerScheduleTest, DescheduleAnywhereAndTwice) {
  TimerSchedule schedule;
  Named a("a"), b("b"), c("c");
  for (int i = 0; i < 3; ++i) schedule.Reserve();
  schedule.Schedule(&a, At(1));
  schedule.Schedule(&b, At(2));
  schedule.Schedule(&c, At(3));
  schedule.Deschedule(&b);
  schedule.Deschedule(&b);
  EXPECT_FALSE(b.scheduled());
  EXPECT_THAT(Drain(&schedule), ElementsAre("a", "c"));
}

// A thousand entries under random schedules and deschedules come out in
// exactly the order of a reference model, and nothing allocates once
// reserved.
TEST(TimerScheduleTest, AgreesWithAModelAndNeverAllocates) {
  constexpr int kEntries = 1000;
  TimerSchedule schedule;
  std::vector<std::unique_ptr<Named>> entries;
  for (int i = 0; i < kEntries; ++i) {
    entries.push_back(std::make_unique<Named>(std::to_string(i)));
    schedule.Reserve();
  }
  // (time, sequence) -> entry; sequence counts Schedule() calls.
  std::map<std::pair<int, int>, Named*> model;
  std::map<Named*, std::pair<int, int>> key;
  std::mt19937 random(42);
  int sequence = 0;
  std::vector<Named*> order, expected;
  order.reserve(10 * kEntries);
  expected.reserve(10 * kEntries);
  for (int step = 0; step < 20000; ++step) {
    Named* entry = entries[random() % kEntries].get();
    const int what = static_cast<int>(random() % 10);
    if (what < 6) {
      // Few distinct times, so ties are common.
      const int ms = static_cast<int>(random() % 50);
      schedule.Schedule(entry, At(ms));
      if (key.contains(entry)) model.erase(key[entry]);
      key[entry] = {ms, sequence++};
      model[key[entry]] = entry;
    } else if (what < 8) {
      schedule.Deschedule(entry);
      if (key.contains(entry)) {
        model.erase(key[entry]);
        key.erase(entry);
      }
    } else if (TimerSchedule::Entry* earliest = schedule.Earliest()) {
      order.push_back(static_cast<Named*>(earliest));
      expected.push_back(model.begin()->second);
      schedule.Deschedule(earliest);
      key.erase(model.begin()->second);
      model.erase(model.begin());
    }
    ASSERT_EQ(schedule.size(), model.size());
    // The time the loop's second timerfd is armed for, and the entry the
    // loop prefetches while running the earliest.
    if (model.size() < 2) {
      ASSERT_EQ(schedule.SecondEarliestTime(), std::nullopt);
      ASSERT_EQ(schedule.SecondEarliest(), nullptr);
    } else {
      ASSERT_EQ(schedule.SecondEarliestTime(),
                At(std::next(model.begin())->first.first));
      ASSERT_EQ(schedule.SecondEarliest(), std::next(model.begin())->second);
    }
  }
  EXPECT_EQ(order, expected);

  // The model allocates, so the schedule alone is counted here.
  const uint64_t quiet = testing::HeapAllocations();
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < kEntries; ++i) {
      schedule.Schedule(entries[i].get(), At((i * 7 + round) % 13));
    }
    while (TimerSchedule::Entry* earliest = schedule.Earliest()) {
      schedule.Deschedule(earliest);
    }
  }
  EXPECT_EQ(testing::HeapAllocations() - quiet, 0u);
}

TEST(TimerScheduleDeathTest, SchedulingMoreThanReservedAborts) {
  TimerSchedule schedule;
  Named a("a"), b("b");
  schedule.Reserve();
  schedule.Schedule(&a, At(1));
  EXPECT_DEATH(schedule.Schedule(&b, At(1)), "more entries scheduled than");
}

TEST(TimerScheduleDeathTest, UnreservingAScheduledEntryAborts) {
  TimerSchedule schedule;
  Named a("a");
  schedule.Reserve();
  schedule.Schedule(&a, At(1));
  EXPECT_DEATH(schedule.Unreserve(), "went away while scheduled");
}

}  // namespace
}  // namespace aos
