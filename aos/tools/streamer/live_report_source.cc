#include "aos/tools/streamer/live_report_source.h"

#include <chrono>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::streamer {

LiveReportSource::LiveReportSource(
    FlatbufferDetachedBuffer<Configuration> config,
    const StreamerOptions* options)
    : config_(std::move(config)), options_(options) {}

std::string LiveReportSource::ConfigDescription() const {
  return options_->flags.config.empty()
             ? std::string(
                   "the built-in aos/aos.json (only /aos), as no --config was "
                   "given")
             : StrCat("--config=", InlinePrintable(options_->flags.config,
                                                   kPrintablePathMaxBytes));
}

std::string LiveReportSource::ConfigMismatchAdvice() const {
  return "give the config the system runs with "
         "(--config=bazel-bin/examples/pingpong_config.json for ping and "
         "pong)";
}

absl::Status LiveReportSource::Subscribe(
    const std::vector<NodeChannel>& reports,
    const std::vector<NodeChannel>& bridges,
    const std::vector<NodeChannel>& starters, ReportReceiver* receiver) {
  loop_.emplace(&configuration(), "aos_timing_report_streamer");
  loop_->SkipTimingReport();
  for (const NodeChannel& channel : reports) {
    loop_->MakeRawWatcher(channel.channel,
                          [receiver](const Context& context, const void* data) {
                            receiver->OnReport(context, data);
                          });
  }
  for (const NodeChannel& channel : bridges) {
    loop_->MakeRawWatcher(
        channel.channel, [receiver, node = channel.node](const Context& context,
                                                         const void* data) {
          receiver->OnBridgeStatistics(node, context, data);
        });
  }
  for (const NodeChannel& channel : starters) {
    loop_->MakeRawWatcher(
        channel.channel, [receiver, node = channel.node](const Context& context,
                                                         const void* data) {
          receiver->OnStarterStatus(node, context, data);
        });
  }
  const StreamerFlags& flags = options_->flags;
  if (flags.duration > 0) {
    TimerHandler* stop = loop_->AddTimer([this]() { loop_->Exit(); });
    loop_->OnRun([this, stop, duration = flags.duration]() {
      stop->Schedule(
          loop_->monotonic_now() +
          std::chrono::nanoseconds(static_cast<int64_t>(duration * 1e9)));
    });
  }
  TimerHandler* no_match = loop_->AddTimer([this, receiver]() {
    const StreamerFlags& flags = options_->flags;
    if (receiver->tally().matched > 0) return;
    LOG(WARNING) << "no timing report matched --application="
                 << flags.application << " --pid=" << flags.pid
                 << " --node=" << flags.node << " in "
                 << flags.no_match_warning_s
                 << " s; reports seen from: " << receiver->tally().SeenNames()
                 << " (reading --shm_base=" << flags.shm_base
                 << " with --config="
                 << (flags.config.empty() ? "aos/aos_config.json, the default"
                                          : flags.config)
                 << ")";
  });
  loop_->OnRun([this, no_match]() {
    no_match->Schedule(loop_->monotonic_now() +
                       std::chrono::nanoseconds(static_cast<int64_t>(
                           options_->flags.no_match_warning_s * 1e9)));
  });
  return absl::OkStatus();
}

void LiveReportSource::Run() { loop_->Run(); }

}  // namespace aos::streamer
