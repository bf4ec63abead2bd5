#ifndef AOS_TOOLS_STREAMER_LIVE_REPORT_SOURCE_H_
#define AOS_TOOLS_STREAMER_LIVE_REPORT_SOURCE_H_

// Timing reports as they are sent, read from shared memory (--shm_base)
// with --config's configuration. Runs until Ctrl-C, SIGTERM, --duration or
// Stop(); warns once --no_match_warning_s passed with no report matching.

#include <optional>
#include <string>

#include "aos/events/shm_event_loop.h"
#include "aos/flatbuffers.h"
#include "aos/tools/streamer/report_source.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

class LiveReportSource : public ReportSource {
 public:
  // Reads with `config` (the one --config named, or the built-in default);
  // `options` must outlive the source.
  LiveReportSource(FlatbufferDetachedBuffer<Configuration> config,
                   const StreamerOptions* options);

  const Configuration& configuration() const override {
    return config_.message();
  }
  std::string ConfigDescription() const override;
  std::string ConfigMismatchAdvice() const override;
  // Makes a watcher on every channel; a reader of other nodes' channels
  // too, the loop runs as no node in particular and sends no report.
  absl::Status Subscribe(const std::vector<NodeChannel>& reports,
                         const std::vector<NodeChannel>& bridges,
                         const std::vector<NodeChannel>& starters,
                         ReportReceiver* receiver) override;
  void Run() override;
  void Stop() override { loop_->Exit(); }
  // Live, "nothing matched" is a warning while it runs.
  void SayWhatWasSeen() const override {}

 private:
  FlatbufferDetachedBuffer<Configuration> config_;
  const StreamerOptions* options_;
  std::optional<ShmEventLoop> loop_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_LIVE_REPORT_SOURCE_H_
