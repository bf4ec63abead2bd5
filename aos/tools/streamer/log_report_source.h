#ifndef AOS_TOOLS_STREAMER_LOG_REPORT_SOURCE_H_
#define AOS_TOOLS_STREAMER_LOG_REPORT_SOURCE_H_

// Timing reports recorded in an MCAP log (aos_logger wrote it), read with
// the log's own configuration, in the order they were sent; Run() returns
// at the end of the log.

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/tools/streamer/report_source.h"

namespace aos::streamer {

class LogReportSource : public ReportSource {
 public:
  // Opens `path` within --log_memory_mb. Errors (one line, naming --log):
  // the log cannot be opened or read, or the budget flag is out of range.
  static absl::StatusOr<std::unique_ptr<LogReportSource>> Open(
      std::string path);

  const Configuration& configuration() const override {
    return *log_->configuration();
  }
  std::string ConfigDescription() const override;
  std::string ConfigMismatchAdvice() const override;
  // Errors: the log's timing reports have a layout this build cannot
  // decode (they would decode into wrong figures).
  absl::Status Subscribe(const std::vector<NodeChannel>& reports,
                         const std::vector<NodeChannel>& bridges,
                         const std::vector<NodeChannel>& starters,
                         ReportReceiver* receiver) override;
  void Run() override;
  void Stop() override { stopped_ = true; }
  // The log's problems, and that no report matched, if none did.
  void SayWhatWasSeen() const override;

 private:
  LogReportSource(std::string path, std::unique_ptr<logging::LogFileReader> log)
      : path_(std::move(path)), log_(std::move(log)) {}

  std::string path_;
  std::unique_ptr<logging::LogFileReader> log_;
  ReportReceiver* receiver_ = nullptr;
  std::map<const Channel*, std::string> report_nodes_;
  std::map<const Channel*, std::string> bridge_nodes_;
  std::map<const Channel*, std::string> starter_nodes_;
  bool stopped_ = false;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_LOG_REPORT_SOURCE_H_
