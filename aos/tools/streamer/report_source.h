#ifndef AOS_TOOLS_STREAMER_REPORT_SOURCE_H_
#define AOS_TOOLS_STREAMER_REPORT_SOURCE_H_

// Where aos_timing_report_streamer's reports come from: live shared memory
// (live_report_source.h) or an MCAP log (log_report_source.h). Both hand
// every message of the channels they are given to one ReportReceiver
// (report_dispatcher.h), so what is shown never depends on the source.
//
//   source->Subscribe(report_channels, bridge_channels, &dispatcher);
//   source->Run();              // until the end, a signal or Stop()
//   source->SayWhatWasSeen();   // problems, or that nothing matched

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/tools/node_channels.h"

namespace aos::streamer {

// What the receiver has made of the reports so far, for the sources'
// "nothing matched" messages.
struct MatchTally {
  // Reports that passed the filters.
  int64_t matched = 0;
  // The applications of every valid report, matched or not.
  std::set<std::string> seen_names;

  // seen_names joined by ", ", or "nobody".
  std::string SeenNames() const;
};

// Takes the messages a ReportSource delivers. The data are valid only during
// the call.
class ReportReceiver {
 public:
  virtual ~ReportReceiver() = default;
  // A message of a timing report channel (not yet validated).
  virtual void OnReport(const Context& context, const void* data) = 0;
  // A message of `node`'s message bridge ClientStatistics channel (not yet
  // validated).
  virtual void OnBridgeStatistics(const std::string& node,
                                  const Context& context, const void* data) = 0;
  // A message of `node`'s starter status channel (aos.starter.Status; not
  // yet validated).
  virtual void OnStarterStatus(const std::string& node, const Context& context,
                               const void* data) = 0;
  virtual const MatchTally& tally() const = 0;
};

class ReportSource {
 public:
  virtual ~ReportSource() = default;

  // The configuration the reports are read with; valid as long as the
  // source.
  virtual const Configuration& configuration() const = 0;
  // Which configuration that is, for a message that the reports do not fit
  // it: "the log's own config (PATH)", "--config=PATH", ...
  virtual std::string ConfigDescription() const = 0;
  // What to do when the reports name channels the configuration lacks.
  virtual std::string ConfigMismatchAdvice() const = 0;

  // Arranges for every message of `reports`, `bridges` and `starters`
  // (channels of configuration()) to reach `receiver`, which must outlive
  // Run(). Errors
  // (one line, for the user): the channels cannot be read, e.g. a log whose
  // reports have a layout this build cannot decode. Call once, before Run.
  virtual absl::Status Subscribe(const std::vector<NodeChannel>& reports,
                                 const std::vector<NodeChannel>& bridges,
                                 const std::vector<NodeChannel>& starters,
                                 ReportReceiver* receiver) = 0;
  // Delivers messages in the order they were sent until there are no more
  // (a log), a signal or the source's own time limit ends it (live), or the
  // receiver calls Stop().
  virtual void Run() = 0;
  // Called from within a delivery: no message is delivered after it.
  virtual void Stop() = 0;
  // After Run, on stderr: what went wrong reading, and that no report
  // matched if none did (a live source says the latter while it runs).
  virtual void SayWhatWasSeen() const = 0;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_REPORT_SOURCE_H_
