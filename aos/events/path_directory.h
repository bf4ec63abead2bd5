#ifndef AOS_EVENTS_PATH_DIRECTORY_H_
#define AOS_EVENTS_PATH_DIRECTORY_H_

// Where the data a watcher or fetcher got came from: the route of each of
// its paths (timing_path.h), pieced together hop by hop from the timing
// reports of every loop (docs/streamer.md, "Path latency").
//
//   PathDirectory directory(&config);
//   directory.Learn(report);              // every decoded report, any loop
//   for (const ReportPath& path : PathsOf(report)) {
//     std::cout << DescribePath(&directory, report.header, path) << "\n";
//   }
//   // pi1 ping timer "ping" → /test aos.examples.Ping → pi2 pong →
//   //     /test aos.examples.Pong → pi1 ping watcher
//
// How a route is found: an origin id names the timer or phased loop whose
// report lists it (Timer.origin_id). The message that reached channel C
// carrying (origin, k hops) was sent by the loop whose sender on C carried
// (origin, k) (Sender.sent_origins); that loop got the data through its
// watcher or fetcher with (origin, k - 1), which names the channel before;
// and so on down to 1 hop, the message the origin's own loop sent.
//
// What it does not know, it says, and never guesses: an origin that no
// report lists is "origin 0x1234abcd (no report seen)"; a stretch it cannot
// follow is "? (N hops)", N messages between the origin and the first named
// piece after it; when two loops (or two channels) fit one step, that step
// is "one of: a, b" and the walk stops there. In a multi-node config, a
// channel forwarded to other nodes is sent again there by their message
// bridges: a loop on the channel's source node is taken over those. Names
// come from reports, which anyone can send: every one is escaped
// (aos/util/printable.h).
//
// It knows what the latest report of each loop (node + name) said: an
// origin a loop's latest window did not send is forgotten, until a window
// sends it again. At most kMaxLoops loops are learned; reports of further
// ones are counted in ignored_reports().
//
// Not for realtime code: allocates freely. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/timing_report_codec.h"

namespace aos {

// The paths of one watcher or fetcher of a report.
struct PathEntry {
  // "watcher" or "fetcher".
  std::string_view kind = {};
  int channel_index = -1;
  // Its paths, deadline, dropped samples and invalid origins.
  const timing::PathTimings* paths = nullptr;
};

// Every watcher of `report` in order, then every fetcher, paths or not. The
// pointers point into `report`.
std::vector<PathEntry> PathEntriesOf(const timing::ReportContents& report);

// One path of a watcher or fetcher of a report.
struct ReportPath {
  // "watcher" or "fetcher".
  std::string_view kind = {};
  int channel_index = -1;
  // The entry's paths: its deadline, dropped samples and invalid origins.
  const timing::PathTimings* entry = nullptr;
  const timing::PathTiming* path = nullptr;
};

// Every path of `report`: its watchers' in order, then its fetchers'. The
// pointers point into `report`.
std::vector<ReportPath> PathsOf(const timing::ReportContents& report);

// The watcher or fetcher a path ends at.
struct PathEnd {
  // The report's node ("" in a single-node config) and loop name.
  std::string_view node = {};
  std::string_view loop = {};
  // "watcher" or "fetcher".
  std::string_view kind = {};
  int channel_index = -1;
};

class PathDirectory {
 public:
  // Loops learned at most; a hostile sender of reports under ever new names
  // makes it hold no more than this.
  static constexpr size_t kMaxLoops = 1024;

  // `config` names the channels (by the reports' channel indices) and says
  // which node sends each; it must outlive the directory.
  explicit PathDirectory(const Configuration* config);

  // Learns `report` (decoded, so validated): the origin ids of its timers
  // and phased loops, the (origin, hops) its senders carried, and the paths
  // of its watchers and fetchers. Replaces what an earlier report of the
  // same loop (node + name) said.
  void Learn(const timing::ReportContents& report);

  // The timer or phased loop `origin_id` names: `pi1 ping timer "ping"`
  // (the node only in a multi-node config), "origin 0x1234abcd (no report
  // seen)", or "one of: ..." when more than one loop lists the id.
  std::string Origin(uint32_t origin_id) const;

  // The route of the path (`origin_id`, `hops`) that ended at `end`, from
  // the origin to `end`, pieces joined by " → " (see above).
  std::string Route(const PathEnd& end, uint32_t origin_id,
                    uint32_t hops) const;

  size_t loops() const { return loops_.size(); }
  // Reports not learned because kMaxLoops loops were known.
  uint64_t ignored_reports() const { return ignored_reports_; }

 private:
  // One (channel, origin, hops) a loop sent or received.
  struct Hop {
    int channel_index;
    uint32_t origin_id;
    uint32_t hops;
  };
  struct OriginName {
    uint32_t id;
    std::string_view kind;  // "timer" or "phased loop".
    std::string name;
  };
  struct Loop {
    std::string node;
    std::string name;
    std::vector<OriginName> origins;
    std::vector<Hop> sent;
    std::vector<Hop> received;
  };

  // "pi1 ping", or "ping" in a single-node config; escaped.
  std::string LoopName(std::string_view node, std::string_view name) const;
  std::string ChannelName(int channel_index) const;
  // The loops that sent (origin, hops) on the channel, those on its source
  // node first (see above).
  std::vector<const Loop*> Senders(int channel_index, uint32_t origin_id,
                                   uint32_t hops) const;
  // The channels of `loop`'s watchers and fetchers that got (origin, hops).
  static std::vector<int> ReceivedOn(const Loop& loop, uint32_t origin_id,
                                     uint32_t hops);

  const Configuration* const config_;
  const bool multi_node_;
  std::map<std::pair<std::string, std::string>, Loop> loops_;
  uint64_t ignored_reports_ = 0;
};

// "1 hop", "2 hops".
std::string FormatHops(uint64_t hops);

// "0x1234abcd": an origin id as every output shows it.
std::string FormatOriginId(uint32_t origin_id);

// "origin 0x1234abcd (2 hops)": a path named without a directory.
std::string UnresolvedPath(uint32_t origin_id, uint32_t hops);

// A path of the report with `header`: its route through `directory`, or
// UnresolvedPath() when `directory` is null.
std::string DescribePath(const PathDirectory* directory,
                         const timing::ReportHeader& header,
                         const ReportPath& path);

}  // namespace aos

#endif  // AOS_EVENTS_PATH_DIRECTORY_H_
