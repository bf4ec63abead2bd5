// Writes what trace_check_test.sh checks with an npm trace event model: a
// snapshot of a simulated ping/pong for the window of ping's second timing
// report (DIR/snapshot.json), and what that report and the trace say
// should be in it (DIR/expected.json): each process's handler runs per
// track, as the timing report counted them, and the number of flows.
//
//   trace_check_writer --dir=DIR

#include <fstream>

#include "aos/configuration.h"
#include "aos/init.h"
#include "aos/testing/path.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/snapshot_files.h"
#include "aos/tracing/traced_pingpong.h"
#include "aos/util/json_writer.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(dir, "", "Directory to write snapshot.json and expected.json.");

namespace aos::tracing {
namespace {

using std::chrono::milliseconds;

int Main() {
  if (FLAGS_dir.empty()) ExitForUserError("give --dir=DIR");
  const absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> config =
      configuration::ReadConfig(
          aos::testing::ArtifactPath("aos/testing/test_config.json"));
  CHECK(config.ok()) << config.status();
  TracedPingPong pingpong(&config->message());
  pingpong.factory()->RunFor(milliseconds(2500));
  CHECK_EQ(pingpong.reports("ping").size(), 2u);
  CHECK_EQ(pingpong.reports("pong").size(), 2u);
  const ReportCounts& ping_report = pingpong.reports("ping")[1];
  const ReportCounts& pong_report = pingpong.reports("pong")[1];
  CHECK_EQ(ping_report.start, pong_report.start) << "one window for both";

  TraceWindow window;
  window.begin_ns = ping_report.start;
  window.end_ns = ping_report.end - 1;
  SnapshotInfo info;
  info.reason = "snapshot";
  const Trace trace =
      BuildTrace({CopyRingOf(*pingpong.ping()), CopyRingOf(*pingpong.pong())},
                 window, info);
  absl::StatusOr<std::string> path = WriteSnapshot(FLAGS_dir, trace, 0);
  if (!path.ok()) ExitForUserError(std::string(path.status().message()));
  if (rename(path->c_str(), (FLAGS_dir + "/snapshot.json").c_str()) != 0) {
    ExitForUserError(FLAGS_dir + "/snapshot.json: cannot write it");
  }
  int flows = 0;
  for (const TraceEvent& event : trace.events) flows += event.phase == 's';

  JsonWriter json(1);
  json.BeginObject().Key("processes").BeginObject();
  json.Key("ping").BeginObject();
  json.Key("timer ping").Number(ping_report.timer_count);
  json.Key("watcher /test").Number(ping_report.watcher_count);
  json.EndObject();
  json.Key("pong").BeginObject();
  json.Key("watcher /test").Number(pong_report.watcher_count);
  json.EndObject();
  json.EndObject();
  json.Key("flows").Number(flows);
  json.EndObject();
  std::ofstream(FLAGS_dir + "/expected.json") << json.Text() << "\n";
  return 0;
}

}  // namespace
}  // namespace aos::tracing

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: trace_check_writer --dir=DIR\n"
                  "Writes a simulated ping/pong's snapshot and what it "
                  "should hold, for trace_check_test.sh.");
  return aos::tracing::Main();
}
