#include "tools/bench/ipc_pingpong.h"

#include "gflags/gflags.h"
#include "gtest/gtest.h"
#include "tools/bench/ipc_pingpong_flags.h"

DECLARE_string(role);
DECLARE_string(mode);
DECLARE_int32(payload_bytes);
DECLARE_int32(rate_hz);
DECLARE_int32(count);
DECLARE_double(seconds);
DECLARE_int32(priority);

namespace aos::bench {
namespace {

class PingPongOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FLAGS_role = "pong";
    FLAGS_mode = "latency";
  }

 private:
  gflags::FlagSaver saver_;
};

TEST_F(PingPongOptionsTest, GoodFlagsBecomeOptions) {
  FLAGS_role = "ping";
  FLAGS_mode = "throughput";
  FLAGS_payload_bytes = 1024;
  FLAGS_priority = 80;
  FLAGS_seconds = 0.5;
  absl::StatusOr<PingPongOptions> options = PingPongOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->role, PingPongRole::kPing);
  EXPECT_EQ(options->mode, PingPongMode::kThroughput);
  EXPECT_EQ(options->payload_bytes, 1024);
  EXPECT_EQ(options->priority, 80);
  EXPECT_DOUBLE_EQ(options->seconds, 0.5);
}

// Each bad flag is one message naming it and its value.
TEST_F(PingPongOptionsTest, BadFlagsAreNamed) {
  struct Case {
    std::function<void()> set;
    std::string expected;
  };
  const Case cases[] = {
      {[] { FLAGS_role = ""; }, "--role= is not one of ping, pong"},
      {[] { FLAGS_mode = "fast"; },
       "--mode=fast is not one of latency, throughput"},
      {[] { FLAGS_payload_bytes = 8; }, "--payload_bytes=8 is not 16-65536"},
      {[] { FLAGS_rate_hz = 0; }, "--rate_hz=0 is not 1-100000"},
      {[] { FLAGS_count = 0; }, "--count=0 is not 1 or more"},
      {[] { FLAGS_priority = 100; },
       "--priority=100 is not a SCHED_FIFO priority"},
  };
  for (const Case& c : cases) {
    gflags::FlagSaver saver;
    c.set();
    absl::StatusOr<PingPongOptions> options = PingPongOptionsFromFlags();
    ASSERT_FALSE(options.ok()) << c.expected;
    EXPECT_NE(options.status().message().find(c.expected), std::string::npos)
        << options.status().message();
  }
}

TEST(PayloadHeaderTest, RoundTripsUnaligned) {
  char bytes[40] = {};
  PayloadHeader header;
  header.sent_ns = 123456789012345;
  header.sequence = kStopSequence;
  WritePayloadHeader(header, bytes + 3);
  const PayloadHeader read = ReadPayloadHeader(bytes + 3);
  EXPECT_EQ(read.sent_ns, header.sent_ns);
  EXPECT_EQ(read.sequence, kStopSequence);
}

TEST(ThroughputCounterTest, CountsGapsAsLost) {
  ThroughputCounter counter;
  EXPECT_TRUE(std::isnan(counter.messages_per_second()));
  counter.Received(0, 1000000000);
  counter.Received(1, 1250000000);
  counter.Received(4, 1500000000);  // 2 and 3 were overwritten.
  EXPECT_EQ(counter.received(), 3);
  EXPECT_EQ(counter.lost(), 2);
  EXPECT_DOUBLE_EQ(counter.seconds(), 0.5);
  EXPECT_DOUBLE_EQ(counter.messages_per_second(), 4.0);
}

TEST(ResultTest, LatencyResultRoundTrips) {
  LatencySamples samples;
  for (int i = 1; i <= 100; ++i) samples.Add(i * 1000);
  PingPongResult result;
  result.implementation = "iceoryx";
  result.role = PingPongRole::kPong;
  result.mode = PingPongMode::kLatency;
  result.payload_bytes = 32;
  result.priority = 80;
  result.latency = samples.Finish("wakeup");
  absl::StatusOr<JsonDocument> doc =
      JsonDocument::Parse(ResultJson(result), "pong.json");
  ASSERT_TRUE(doc.ok()) << doc.status();
  absl::StatusOr<PingPongResult> read = ReadResult(doc->root());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->implementation, "iceoryx");
  EXPECT_EQ(read->role, PingPongRole::kPong);
  EXPECT_EQ(read->mode, PingPongMode::kLatency);
  EXPECT_EQ(read->payload_bytes, 32);
  EXPECT_EQ(read->priority, 80);
  EXPECT_EQ(read->latency.count, 100);
  EXPECT_NEAR(read->latency.p50_us, 50.0, 2.0);
  EXPECT_NEAR(read->latency.max_us, 100.0, 0.01);
}

TEST(ResultTest, ThroughputResultRoundTripsWithNan) {
  PingPongResult result;
  result.implementation = "aos";
  result.mode = PingPongMode::kThroughput;
  result.payload_bytes = 1024;
  result.received = 1;
  result.lost = 0;
  const std::string json = ResultJson(result);
  // Strict JSON: one message gives no rate, written as null.
  EXPECT_NE(json.find("\"messages_per_second\": null"), std::string::npos)
      << json;
  absl::StatusOr<JsonDocument> doc = JsonDocument::Parse(json, "pong.json");
  ASSERT_TRUE(doc.ok()) << doc.status();
  absl::StatusOr<PingPongResult> read = ReadResult(doc->root());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->mode, PingPongMode::kThroughput);
  EXPECT_EQ(read->received, 1);
  EXPECT_TRUE(std::isnan(read->messages_per_second));
}

TEST(ResultTest, ErrorsNameTheField) {
  for (const auto& [json, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {R"({"implementation": "aos"})", "role is missing"},
           {R"({"implementation": "aos", "role": "peng"})",
            "role is not ping or pong"},
           {R"({"implementation": "aos", "role": "pong", "mode": "latency",
               "payload_bytes": 32, "priority": 0})",
            "latency is missing"},
           {R"({"implementation": "aos", "role": "pong", "mode": "throughput",
               "payload_bytes": 32, "priority": 0, "received": 3})",
            "lost is missing"},
       }) {
    absl::StatusOr<JsonDocument> doc = JsonDocument::Parse(json, "r.json");
    ASSERT_TRUE(doc.ok()) << doc.status();
    absl::StatusOr<PingPongResult> read = ReadResult(doc->root());
    ASSERT_FALSE(read.ok()) << json;
    EXPECT_NE(read.status().message().find(expected), std::string::npos)
        << read.status().message();
    EXPECT_NE(read.status().message().find("r.json"), std::string::npos)
        << read.status().message();
  }
}

}  // namespace
}  // namespace aos::bench
