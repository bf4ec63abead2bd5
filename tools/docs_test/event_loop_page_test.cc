// docs/event_loop.md opens with a whole class, `Ping`, that compiles as the
// page shows it and sends a Ping every 10 ms once its loop runs.
#include <chrono>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"
#include "gtest/gtest.h"
// Made from the page by extract_block.py (BUILD).
#include "tools/docs_test/event_loop_opening.h"

namespace {

TEST(EventLoopPageTest, TheOpeningPingSendsEvery10Ms) {
  auto config = aos::configuration::ReadConfig(
      aos::testing::ArtifactPath("examples/pingpong_config.json"));
  ASSERT_TRUE(config.ok()) << config.status();
  aos::SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<aos::EventLoop> ping_loop = factory.MakeEventLoop("ping");
  std::unique_ptr<aos::EventLoop> test_loop = factory.MakeEventLoop("test");
  Ping ping(ping_loop.get());
  std::vector<int> values;
  test_loop->MakeWatcher("/test", [&](const aos::examples::Ping& message) {
    values.push_back(message.value());
  });
  // Sends at 0, 10, ..., 990 ms.
  factory.RunFor(std::chrono::milliseconds(995));
  ASSERT_EQ(values.size(), 100u);
  EXPECT_EQ(values.front(), 1);
  EXPECT_EQ(values.back(), 100);
}

}  // namespace
