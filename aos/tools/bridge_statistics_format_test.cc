#include "aos/tools/bridge_statistics_format.h"

#include "aos/events/timing_histogram.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;

TEST(BridgeStatisticsFormatTest, OneRowPerPeerWithLatencyPercentiles) {
  flatbuffers::FlatBufferBuilder fbb;
  timing::LatencyHistogram latency;
  for (int i = 1; i <= 100; ++i) latency.Record(i * 10'000);  // 10..1000 us
  const auto histogram = latency.Encode(&fbb);
  const auto name = fbb.CreateString("pi2");
  message_bridge::ClientConnection::Builder connection(fbb);
  connection.add_node(name);
  connection.add_state(message_bridge::State::CONNECTED);
  connection.add_received_packets(100);
  connection.add_lost_packets(5);
  connection.add_duplicate_packets(2);
  connection.add_dropped_invalid(1);
  connection.add_dropped_oversize(3);
  connection.add_reboots(1);
  connection.add_refused_reboots(1497);
  connection.add_invalid_origins(9);
  connection.add_origins_without_offset(11);
  connection.add_paced_packets(13);
  connection.add_monotonic_offset(-3'000);
  connection.add_monotonic_offset_uncertainty(41'000);
  connection.add_one_way_latency_histogram(histogram);
  const auto connections = fbb.CreateVector({connection.Finish()});
  message_bridge::ClientStatistics::Builder statistics(fbb);
  statistics.add_connections(connections);
  statistics.add_dropped_unknown_node(7);
  fbb.Finish(statistics.Finish());
  const std::string text = FormatClientStatistics(
      *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
          fbb.GetBufferPointer()),
      "pi1", TimeUnit::kMicroseconds);
  EXPECT_THAT(text, HasSubstr("network into pi1 (message_bridge)"));
  EXPECT_THAT(text, ::testing::ContainsRegex("from +state +received"));
  // received 100, lost 5, dup 2, dropped 1 + 3, reboots 1, disconnects 0,
  // offset -3.00 us +- 41.0 us, 100 samples from 10 us to 1000 us.
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "pi2 +CONNECTED +100 +5 +2 +4 +1 +0 +-3.00 +41.0 +100 "
                        "+10.0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1000"));
  EXPECT_THAT(text, HasSubstr("dropped from no node of the configuration: 7"));
  EXPECT_THAT(text, HasSubstr("  reboots of pi2 not believed (more than 3 a "
                              "minute: forged probes?): 1497\n"));
  EXPECT_THAT(text, HasSubstr("  path origins from pi2 dropped as impossible "
                              "(forged or damaged?): 9\n"));
  EXPECT_THAT(text, HasSubstr("  path origins from pi2 dropped before a clock "
                              "offset estimate: 11\n"));
  EXPECT_THAT(text, HasSubstr("  messages from pi2 that came faster than their "
                              "channel takes them and waited (paced; in the "
                              "latency): 13\n"));
}

TEST(BridgeStatisticsFormatTest, NoOffsetOrSamplesYetAreDashes) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto name = fbb.CreateString("pi2");
  message_bridge::ClientConnection::Builder connection(fbb);
  connection.add_node(name);
  const auto connections = fbb.CreateVector({connection.Finish()});
  message_bridge::ClientStatistics::Builder statistics(fbb);
  statistics.add_connections(connections);
  fbb.Finish(statistics.Finish());
  const std::string text = FormatClientStatistics(
      *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
          fbb.GetBufferPointer()),
      "pi1", TimeUnit::kMicroseconds);
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "pi2 +DISCONNECTED +0 +0 +0 +0 +0 +0 +- +- +0 +- +- +- "
                        "+- +-\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("no node of the configuration")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("not believed")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("path origins")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("paced")));
}

// A node name comes from whoever sent the statistics: escape sequences and
// line breaks in it never reach the terminal.
TEST(BridgeStatisticsFormatTest, NodeNamesFromPeersAreEscaped) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto name = fbb.CreateString(std::string("pi\x1b[2J\nforged\0", 14));
  message_bridge::ClientConnection::Builder connection(fbb);
  connection.add_node(name);
  connection.add_refused_reboots(4);
  const auto connections = fbb.CreateVector({connection.Finish()});
  message_bridge::ClientStatistics::Builder statistics(fbb);
  statistics.add_connections(connections);
  fbb.Finish(statistics.Finish());
  const std::string text = FormatClientStatistics(
      *flatbuffers::GetRoot<message_bridge::ClientStatistics>(
          fbb.GetBufferPointer()),
      "pi1", TimeUnit::kMicroseconds);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\x1b")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\nforged")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(std::string(1, '\0'))));
  EXPECT_THAT(text, HasSubstr("\"pi\\x1b[2J\\nforged\\x00\" "));
  EXPECT_THAT(text, HasSubstr("reboots of \"pi\\x1b[2J\\nforged\\x00\" "
                              "not believed"));
}

}  // namespace
}  // namespace aos
