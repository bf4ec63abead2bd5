// Timing reports AOS can read: every field AOS's aos.timing.Report schema
// has keeps AOS's id, type and default in ours, and a report a loop
// publishes reads correctly at AOS's field positions.
//
// What AOS's schema says (frc971's aos/events/event_loop.fbs) is restated
// below as facts (table, field, id, type, default), not copied: the test
// reads our schema (the embedded .bfbs) and our bytes through them.

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/events/timing_report_codec.h"
#include "aos/flatbuffers.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "flatbuffers/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::timing {
namespace {

using reflection::BaseType;

// One field of AOS's schema.
struct AosField {
  const char* table;
  const char* field;
  int id;
  BaseType type;
  // For vectors: the element type.
  BaseType element = BaseType::None;
  // For scalars: the default (NaN for floats that default to nan).
  double default_value = 0;
};

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// AOS's aos.timing tables, field by field.
const std::vector<AosField>& AosFields() {
  static const std::vector<AosField> fields = {
      {"aos.timing.SendErrorCount", "error", 0, BaseType::Byte},
      {"aos.timing.SendErrorCount", "count", 1, BaseType::UInt},
      {"aos.timing.Statistic", "average", 0, BaseType::Float, BaseType::None,
       kNan},
      {"aos.timing.Statistic", "min", 1, BaseType::Float, BaseType::None, kNan},
      {"aos.timing.Statistic", "max", 2, BaseType::Float, BaseType::None, kNan},
      {"aos.timing.Statistic", "standard_deviation", 3, BaseType::Float,
       BaseType::None, kNan},
      {"aos.timing.Sender", "channel_index", 0, BaseType::Int, BaseType::None,
       -1},
      {"aos.timing.Sender", "count", 1, BaseType::UInt},
      {"aos.timing.Sender", "size", 2, BaseType::Obj},
      {"aos.timing.Sender", "channel", 3, BaseType::Obj},
      {"aos.timing.Sender", "error_counts", 4, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Watcher", "channel_index", 0, BaseType::Int, BaseType::None,
       -1},
      {"aos.timing.Watcher", "count", 1, BaseType::UInt},
      {"aos.timing.Watcher", "wakeup_latency", 2, BaseType::Obj},
      {"aos.timing.Watcher", "handler_time", 3, BaseType::Obj},
      {"aos.timing.Watcher", "channel", 4, BaseType::Obj},
      {"aos.timing.Fetcher", "channel_index", 0, BaseType::Int, BaseType::None,
       -1},
      {"aos.timing.Fetcher", "count", 1, BaseType::UInt},
      {"aos.timing.Fetcher", "latency", 2, BaseType::Obj},
      {"aos.timing.Fetcher", "channel", 3, BaseType::Obj},
      {"aos.timing.Timer", "name", 0, BaseType::String},
      {"aos.timing.Timer", "count", 1, BaseType::UInt},
      {"aos.timing.Timer", "wakeup_latency", 2, BaseType::Obj},
      {"aos.timing.Timer", "handler_time", 3, BaseType::Obj},
      {"aos.timing.Report", "name", 0, BaseType::String},
      {"aos.timing.Report", "pid", 1, BaseType::Int},
      {"aos.timing.Report", "watchers", 2, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Report", "senders", 3, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Report", "fetchers", 4, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Report", "timers", 5, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Report", "phased_loops", 6, BaseType::Vector, BaseType::Obj},
      {"aos.timing.Report", "send_failures", 7, BaseType::ULong},
      {"aos.timing.Report", "version", 8, BaseType::String},
  };
  return fields;
}

const reflection::Schema& OurSchema() {
  return *reflection::GetSchema(ReportBinarySchema::data());
}

const reflection::Object* Object(const char* name) {
  for (const reflection::Object* object : *OurSchema().objects()) {
    if (object->name()->string_view() == name) return object;
  }
  return nullptr;
}

TEST(AosSchemaTest, EveryAosFieldHasAosIdTypeAndDefault) {
  for (const AosField& aos : AosFields()) {
    SCOPED_TRACE(std::string(aos.table) + "." + aos.field);
    const reflection::Object* object = Object(aos.table);
    ASSERT_NE(object, nullptr);
    const reflection::Field* field = object->fields()->LookupByKey(aos.field);
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->id(), aos.id);
    EXPECT_EQ(field->type()->base_type(), aos.type);
    if (aos.type == BaseType::Vector) {
      EXPECT_EQ(field->type()->element(), aos.element);
    }
    if (aos.type == BaseType::Float) {
      EXPECT_EQ(std::isnan(field->default_real()),
                std::isnan(aos.default_value));
    } else if (aos.type == BaseType::Int || aos.type == BaseType::UInt ||
               aos.type == BaseType::ULong || aos.type == BaseType::Byte) {
      EXPECT_EQ(static_cast<double>(field->default_integer()),
                aos.default_value);
    }
  }
}

// Our own fields come after AOS's in every table AOS has, so an AOS reader
// never meets one of ours at an id it knows.
TEST(AosSchemaTest, OurAdditionsComeAfterAosIds) {
  for (const char* table :
       {"aos.timing.Sender", "aos.timing.Watcher", "aos.timing.Fetcher",
        "aos.timing.Timer", "aos.timing.Report", "aos.timing.Statistic",
        "aos.timing.SendErrorCount"}) {
    int last_aos_id = -1;
    for (const AosField& aos : AosFields()) {
      if (std::string_view(aos.table) == table) {
        last_aos_id = std::max(last_aos_id, aos.id);
      }
    }
    for (const reflection::Field* field : *Object(table)->fields()) {
      bool is_aos = false;
      for (const AosField& aos : AosFields()) {
        is_aos |= std::string_view(aos.table) == table &&
                  field->name()->string_view() == aos.field;
      }
      if (!is_aos) {
        EXPECT_GT(field->id(), last_aos_id)
            << table << "." << field->name()->string_view();
      }
    }
  }
}

// What an AOS reader finds at AOS's positions.
template <typename T>
T Scalar(const flatbuffers::Table& table, int id, T default_value) {
  return table.GetField<T>(static_cast<flatbuffers::voffset_t>(4 + 2 * id),
                           default_value);
}
template <typename P>
const P* Pointer(const flatbuffers::Table& table, int id) {
  return table.GetPointer<const P*>(
      static_cast<flatbuffers::voffset_t>(4 + 2 * id));
}
using TableVector =
    flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;

// AOS's Statistic at `id` of `table` equals ours.
void ExpectStatistic(const flatbuffers::Table& table, int id,
                     const RunningStatistic& ours) {
  const flatbuffers::Table* statistic = Pointer<flatbuffers::Table>(table, id);
  ASSERT_NE(statistic, nullptr);
  const float average = Scalar<float>(*statistic, 0, NAN);
  if (ours.count() == 0) {
    EXPECT_TRUE(std::isnan(average));
    return;
  }
  EXPECT_FLOAT_EQ(average, static_cast<float>(ours.average()));
  EXPECT_FLOAT_EQ(Scalar<float>(*statistic, 1, NAN),
                  static_cast<float>(ours.min()));
  EXPECT_FLOAT_EQ(Scalar<float>(*statistic, 2, NAN),
                  static_cast<float>(ours.max()));
}

TEST(AosSchemaTest, APublishedReportReadsAtAosPositions) {
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "frequency": 50,
        "max_size": 16384 },
      { "name": "/test", "type": "aos.testing.TestMessage",
        "frequency": 1000, "max_size": 64 } ] })");
  ASSERT_TRUE(config.ok()) << config.status().message();
  SimulatedEventLoopFactory factory(&config->message());
  auto loop = factory.MakeEventLoop("ping");
  loop->SetVersionString("ping_version");
  auto sender = loop->MakeSender<testing::TestMessage>("/test");
  auto fetcher = loop->MakeFetcher<testing::TestMessage>("/test");
  loop->MakeWatcher("/test",
                    [&](const testing::TestMessage&) { fetcher.Fetch(); });
  TimerHandler* timer = loop->AddTimer([&]() {
    auto builder = sender.MakeBuilder();
    testing::TestMessage::Builder message =
        builder.MakeBuilder<testing::TestMessage>();
    message.add_value(1);
    builder.CheckOk(builder.Send(message.Finish()));
  });
  timer->set_name("ping");
  loop->AddPhasedLoop([](int) {}, std::chrono::milliseconds(20));
  loop->OnRun([&]() {
    timer->Schedule(loop->monotonic_now(), std::chrono::milliseconds(10));
  });
  auto reader = factory.MakeEventLoop("reader");
  reader->SkipTimingReport();
  std::vector<uint8_t> bytes;
  reader->MakeRawWatcher(reader->GetChannel<Report>("/aos"),
                         [&](const Context& context, const void* data) {
                           const auto* begin =
                               static_cast<const uint8_t*>(data);
                           if (bytes.empty())
                             bytes.assign(begin, begin + context.size);
                         });
  factory.RunFor(std::chrono::milliseconds(1500));
  ASSERT_FALSE(bytes.empty()) << "no report published";
  auto decoded = DecodeTimingReport({bytes.data(), bytes.size()});
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();

  const flatbuffers::Table& report =
      *flatbuffers::GetRoot<flatbuffers::Table>(bytes.data());
  EXPECT_EQ(Pointer<flatbuffers::String>(report, 0)->string_view(), "ping");
  EXPECT_EQ(Scalar<int32_t>(report, 1, 0), decoded->header.pid);
  EXPECT_EQ(Scalar<uint64_t>(report, 7, 1), 0u);
  EXPECT_EQ(Pointer<flatbuffers::String>(report, 8)->string_view(),
            "ping_version");

  const TableVector* watchers = Pointer<TableVector>(report, 2);
  ASSERT_NE(watchers, nullptr);
  ASSERT_EQ(watchers->size(), decoded->watchers.size());
  for (size_t i = 0; i < watchers->size(); ++i) {
    const flatbuffers::Table& watcher = *watchers->Get(i);
    const WatcherTiming& ours = decoded->watchers[i];
    EXPECT_EQ(Scalar<int32_t>(watcher, 0, -1), ours.channel_index);
    EXPECT_EQ(Scalar<uint32_t>(watcher, 1, 0), ours.count);
    ExpectStatistic(watcher, 2, ours.wakeup_latency.statistic());
    ExpectStatistic(watcher, 3, ours.handler_time.statistic());
    EXPECT_EQ(Pointer<flatbuffers::Table>(watcher, 4), nullptr);
  }
  EXPECT_GT(decoded->watchers.at(0).count, 0u);

  const TableVector* senders = Pointer<TableVector>(report, 3);
  ASSERT_NE(senders, nullptr);
  ASSERT_EQ(senders->size(), decoded->senders.size());
  for (size_t i = 0; i < senders->size(); ++i) {
    const flatbuffers::Table& sender_table = *senders->Get(i);
    const SenderTiming& ours = decoded->senders[i];
    EXPECT_EQ(Scalar<int32_t>(sender_table, 0, -1), ours.channel_index);
    EXPECT_EQ(Scalar<uint32_t>(sender_table, 1, 0), ours.count);
    ExpectStatistic(sender_table, 2, ours.size);
    EXPECT_EQ(Pointer<flatbuffers::Table>(sender_table, 3), nullptr);
    const TableVector* errors = Pointer<TableVector>(sender_table, 4);
    ASSERT_NE(errors, nullptr);
    ASSERT_EQ(errors->size(), kSendErrorCount);
    for (size_t e = 0; e < errors->size(); ++e) {
      EXPECT_EQ(Scalar<int8_t>(*errors->Get(e), 0, 0), static_cast<int8_t>(e));
      EXPECT_EQ(Scalar<uint32_t>(*errors->Get(e), 1, 0), ours.error_counts[e]);
    }
  }

  const TableVector* fetchers = Pointer<TableVector>(report, 4);
  ASSERT_NE(fetchers, nullptr);
  ASSERT_EQ(fetchers->size(), 1u);
  EXPECT_EQ(Scalar<uint32_t>(*fetchers->Get(0), 1, 0),
            decoded->fetchers[0].count);
  ExpectStatistic(*fetchers->Get(0), 2,
                  decoded->fetchers[0].latency.statistic());

  for (const auto& [id, timers] :
       {std::pair{5, &decoded->timers}, std::pair{6, &decoded->phased_loops}}) {
    const TableVector* aos_timers = Pointer<TableVector>(report, id);
    ASSERT_NE(aos_timers, nullptr);
    ASSERT_EQ(aos_timers->size(), timers->size());
    for (size_t i = 0; i < aos_timers->size(); ++i) {
      const flatbuffers::Table& timer_table = *aos_timers->Get(i);
      EXPECT_EQ(Pointer<flatbuffers::String>(timer_table, 0)->string_view(),
                (*timers)[i].name);
      EXPECT_EQ(Scalar<uint32_t>(timer_table, 1, 0), (*timers)[i].count);
      ExpectStatistic(timer_table, 2, (*timers)[i].wakeup_latency.statistic());
      ExpectStatistic(timer_table, 3, (*timers)[i].handler_time.statistic());
    }
  }
  EXPECT_EQ(decoded->timers.at(0).name, "ping");
}

// A reader refuses reports written with the layout aos used before its ids
// became AOS's, naming the field, instead of decoding them wrongly.
TEST(AosSchemaTest, ReportsOfTheOldLayoutAreRefusedByName) {
  EXPECT_TRUE(CheckTimingReportSchema(OurSchema()).ok());
  // The layout aos used before (testdata/event_loop_before_aos_ids.fbs).
  std::ifstream file(
      aos::testing::ArtifactPath("aos/events/event_loop_before_aos_ids.bfbs"),
      std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  const reflection::Schema* schema = reflection::GetSchema(bytes.data());
  const absl::Status status = CheckTimingReportSchema(*schema);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("is field "));
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("before 2026-11-24"));
}

}  // namespace
}  // namespace aos::timing
