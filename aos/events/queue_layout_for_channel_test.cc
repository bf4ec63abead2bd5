#include "aos/events/queue_layout_for_channel.h"

#include <string_view>

#include "aos/configuration.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(QueueLayoutForChannelTest, SizesFromTheChannelAndTheConfig) {
  auto config = configuration::ReadConfigFromJson(R"({
    "channels": [
      { "name": "/a", "type": "T", "max_size": 128, "frequency": 100,
        "num_senders": 4, "num_watchers": 5, "num_readers": 6 },
      { "name": "/a2", "type": "T", "max_size": 128, "frequency": 100,
        "num_senders": 4, "num_watchers": 5, "num_readers": 60 },
      { "name": "/b", "type": "T", "max_size": 64, "frequency": 3,
        "channel_storage_duration": 500000000 },
      { "name": "/c", "type": "T", "frequency": 1,
        "channel_storage_duration": 1000 },
      { "name": "/d", "type": "T", "max_size": 20 }
    ],
    "channel_storage_duration": 2000000000 })");
  ASSERT_TRUE(config.ok()) << config.status();
  const Configuration& c = config->message();
  const auto channel = [&c](std::string_view name) {
    return configuration::GetChannel(c, name, "T", "app", nullptr);
  };
  const ipc_lib::QueueLayout a = QueueLayoutForChannel(c, *channel("/a"));
  EXPECT_EQ(a.message_data_size, 128u);
  EXPECT_EQ(a.queue_size, 200u);
  EXPECT_EQ(a.num_senders, 4u);
  EXPECT_EQ(a.num_watchers, 5u);
  EXPECT_EQ(a.channel_storage_duration_ns, 2000000000);
  // Readers take no slot: num_readers changes nothing.
  EXPECT_EQ(QueueLayoutForChannel(c, *channel("/a2")), a);
  // ceil(3 * 0.5) = 2.
  const ipc_lib::QueueLayout b = QueueLayoutForChannel(c, *channel("/b"));
  EXPECT_EQ(b.queue_size, 2u);
  EXPECT_EQ(b.channel_storage_duration_ns, 500000000);
  EXPECT_EQ(b.num_senders, 10u);
  // At least one message.
  EXPECT_EQ(QueueLayoutForChannel(c, *channel("/c")).queue_size, 1u);
  // A slot holds max_size rounded up to a multiple of 8.
  EXPECT_EQ(QueueLayoutForChannel(c, *channel("/d")).message_data_size, 24u);
}

}  // namespace
}  // namespace aos
