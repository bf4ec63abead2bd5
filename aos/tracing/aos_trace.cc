// aos_trace: the flight recorder's command line (docs/tracing.md).
//
//   aos_trace snapshot [--before_ms=N] [--after_ms=N] [--out=DIR]
//   aos_trace record --out=DIR [--min_interval_ms=N] [--snapshots=N]
//   aos_trace list DIR
//   aos_trace prune DIR --keep=N
//   aos_trace plot SNAPSHOT.json [--png=FILE] [--plot_from_ms=X]
//   aos_trace merge ASKING.json ASKED.json... [--out=DIR]
//   aos_trace from-log LOG.mcap [--out=DIR]

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "aos/config_flag.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/time/time.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/chrome_trace_reader.h"
#include "aos/tracing/peer_snapshots.h"
#include "aos/tracing/ring_file.h"
#include "aos/tracing/sched_recorder.h"
#include "aos/tracing/sched_text.h"
#include "aos/tracing/sched_tracks.h"
#include "aos/tracing/snapshot_files.h"
#include "aos/tracing/snapshot_schedule.h"
#include "aos/tracing/timeline_plot.h"
#include "aos/tracing/trace_merge.h"
#include "aos/tracing/trace_snapshot_generated.h"
#include "aos/tracing/trace_snapshot_message.h"
#include "aos/tracing/trace_snapshot_reader.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_int32(before_ms, 200,
             "Milliseconds of the rings before the snapshot's time (the "
             "command's, or the trigger's) that a snapshot keeps.");
DEFINE_int32(after_ms, 100,
             "Milliseconds after the snapshot's time that it keeps: the "
             "command, or the recorder after a trigger, waits that long "
             "before reading the rings.");
DEFINE_string(out, ".", "Directory snapshots are written to.");
DEFINE_int32(min_interval_ms, 1000,
             "record: at most one snapshot per this many milliseconds of "
             "trigger time; triggers in between are counted as suppressed.");
DEFINE_int32(poll_ms, 5, "record: how often the rings' headers are read.");
DEFINE_int32(snapshots, 0,
             "record: exit after writing this many snapshots (0: until "
             "Ctrl-C).");
DEFINE_int32(keep, 20, "prune: how many of the newest snapshots to keep.");
DEFINE_int64(disk_budget_mb, 0,
             "record: after each snapshot, remove the oldest of --out until "
             "its snapshots take at most this many MiB (never the newest); "
             "0: no budget.");
DEFINE_string(png, "",
              "plot: the PNG to write (default: the snapshot's path with "
              ".png for .json).");
DEFINE_double(plot_from_ms, std::numeric_limits<double>::quiet_NaN(),
              "plot: where the time axis starts, in ms from the trigger "
              "(negative: before it); default the window's start.");
DEFINE_double(plot_to_ms, std::numeric_limits<double>::quiet_NaN(),
              "plot: where the time axis ends, in ms from the trigger; "
              "default the window's end.");
DEFINE_bool(sched_switch, false,
            "snapshot and record: add the kernel scheduler's switches and "
            "wakeups on the loops' CPUs (a track per CPU: what ran there), "
            "recorded in a tracefs instance of our own from the start of "
            "the command. Needs root and tracefs.");
DEFINE_int32(sched_buffer_kb, 4096,
             "With --sched_switch: the kernel's buffer per CPU in KiB; it "
             "keeps the newest events (a switch is about 64 bytes).");

DECLARE_int32(trace_ring_events);

namespace aos::tracing {
namespace {

volatile std::sig_atomic_t stop_requested = 0;

void RequestStop(int) { stop_requested = 1; }

// The kernel's scheduler events, with --sched_switch.
std::unique_ptr<SchedRecorder> sched_recorder;

int64_t NowNs() { return monotonic_clock::now().time_since_epoch().count(); }

void SleepMs(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// What a snapshot is for: a command, a trigger of this node, or another
// node's ask (then `ask` says whose, and its window).
struct SnapshotCause {
  std::string reason;
  uint64_t suppressed = 0;
  const PeerAsk* ask = nullptr;
};

// This node's name ("" in a single-node system), for snapshots' names.
std::string node_name;

// With --config and an aos.tracing.TraceSnapshot channel on /aos: where
// each snapshot goes too, for a logger to keep.
Sender<TraceSnapshot>* snapshot_sender = nullptr;

// Reads every ring of the node and writes the snapshot of
// [at_ns - before, at_ns + after]; returns its reason ("ping: wakeup
// latency").
std::string Snapshot(int64_t at_ns, SnapshotCause cause) {
  NodeRings node = ReadNodeRings(ShmBase());
  SnapshotInfo info;
  std::string reason = cause.reason;
  info.trigger_ns = reason == "snapshot" ? 0 : at_ns;
  info.suppressed = cause.suppressed;
  info.skipped_rings = node.skipped;
  info.node = node_name;
  for (const RingCopy& ring : node.rings) {
    for (const Event& event : ring.events) {
      if (cause.ask == nullptr && event.kind == EventKind::kTrigger &&
          event.monotonic_ns == at_ns) {
        reason = StrCat(
            ring.application, ": ",
            TriggerReasonName(static_cast<TriggerReason>(event.queue_index)));
      }
    }
  }
  TraceWindow window;
  window.begin_ns = at_ns - int64_t{FLAGS_before_ms} * 1'000'000;
  window.end_ns = at_ns + int64_t{FLAGS_after_ms} * 1'000'000;
  if (cause.ask != nullptr) {
    reason = StrCat("asked by ", cause.ask->node, ": ", cause.ask->reason);
    info.requested_by = cause.ask->node;
    info.requester_trigger_ns = cause.ask->requester_trigger_ns;
    info.clock_offset_ns = cause.ask->clock_offset_ns;
    info.clock_offset_uncertainty_ns = cause.ask->clock_offset_uncertainty_ns;
    window.begin_ns = at_ns - cause.ask->before_ns;
    window.end_ns = at_ns + cause.ask->after_ns;
  }
  info.reason = reason;
  Trace trace = BuildTrace(node.rings, window, info);
  if (sched_recorder != nullptr) {
    absl::StatusOr<std::string> text = sched_recorder->ReadText();
    if (!text.ok()) ExitForUserError(std::string(text.status().message()));
    std::vector<int> loop_pids;
    for (const RingCopy& ring : node.rings) loop_pids.push_back(ring.pid);
    AddSchedTracks(ParseSchedText(*text), sched_recorder->started_ns(),
                   loop_pids, &trace);
  }
  absl::StatusOr<std::string> path =
      WriteSnapshot(FLAGS_out, trace, at_ns, node_name);
  std::string sent;
  if (snapshot_sender != nullptr) {
    const flatbuffers::DetachedBuffer message = TraceSnapshotMessage(
        node.rings, window, trace.info, snapshot_sender->channel()->max_size());
    const TraceSnapshot* snapshot =
        message.size() > 0 ? flatbuffers::GetRoot<TraceSnapshot>(message.data())
                           : nullptr;
    if (snapshot == nullptr) {
      sent = ", too large to send on /aos";
    } else if (snapshot_sender->Send(message.data(), message.size()) ==
               RawSender::Error::kOk) {
      sent = StrCat(", sent on /aos (", snapshot->events()->size(), " events, ",
                    snapshot->events_left_out(), " left out)");
    } else {
      sent = ", not sent on /aos (sent too fast)";
    }
  }
  if (!path.ok()) ExitForUserError(std::string(path.status().message()));
  for (const std::string& skipped : node.skipped) {
    fprintf(stderr, "aos_trace: skipped ring %s\n", skipped.c_str());
  }
  const std::string kernel =
      trace.info.kernel_sched
          ? StrCat(", ", trace.info.kernel_events, " kernel events (",
                   trace.info.kernel_overwritten, " overwritten)")
          : "";
  printf("%s: %zu rings (%zu skipped)%s, %s, %llu suppressed before it%s\n",
         path->c_str(), node.rings.size(), node.skipped.size(), kernel.c_str(),
         info.reason.c_str(), static_cast<unsigned long long>(cause.suppressed),
         sent.c_str());
  fflush(stdout);
  return info.reason;
}

// `aos_trace record`: reads the rings' headers each Poll() and writes a
// snapshot when one is due. Given peers (--config), it asks the other
// nodes for the window of each trigger of its own, and answers their asks.
class Recorder {
 public:
  Recorder()
      : schedule_(int64_t{FLAGS_after_ms} * 1'000'000,
                  int64_t{FLAGS_min_interval_ms} * 1'000'000) {}

  void set_peers(PeerSnapshots* peers) { peers_ = peers; }

  // Another node's ask, on this node's clock: a trigger like any other.
  void Ask(const PeerAsk& ask) {
    // A storm of asks keeps the newest few; the schedule counts the rest.
    if (asks_.size() >= 64) asks_.erase(asks_.begin());
    asks_[ask.trigger_ns] = ask;
    schedule_.Trigger(ask.trigger_ns, 1);
  }

  void Poll() {
    const int64_t now = NowNs();
    if (watched_.empty() || now - last_listed_ > 500'000'000) ListRings(now);
    for (auto& [path, ring] : watched_) {
      absl::StatusOr<RingCounters> counters =
          ReadRingCounters(ring.ring.bytes());
      if (!counters.ok() || counters->trigger_count == ring.triggers) continue;
      schedule_.Trigger(counters->last_trigger_ns,
                        counters->trigger_count - ring.triggers);
      ring.triggers = counters->trigger_count;
    }
    const std::optional<int64_t> due = schedule_.Due(NowNs());
    if (!due.has_value()) return;
    SnapshotCause cause{"trigger", schedule_.TakeSuppressed(), nullptr};
    const auto ask = asks_.find(*due);
    if (ask != asks_.end()) cause.ask = &ask->second;
    const std::string reason = Snapshot(*due, cause);
    if (cause.ask == nullptr && peers_ != nullptr && peers_->can_ask()) {
      peers_->Ask(*due, int64_t{FLAGS_before_ms} * 1'000'000,
                  int64_t{FLAGS_after_ms} * 1'000'000, reason);
    }
    if (FLAGS_disk_budget_mb > 0) {
      absl::StatusOr<int> removed = PruneSnapshotsToBytes(
          FLAGS_out, static_cast<uint64_t>(FLAGS_disk_budget_mb) << 20);
      if (!removed.ok()) {
        ExitForUserError(std::string(removed.status().message()));
      }
      if (*removed > 0) {
        printf(
            "aos_trace record: removed %d older snapshots "
            "(--disk_budget_mb=%lld)\n",
            *removed, static_cast<long long>(FLAGS_disk_budget_mb));
        fflush(stdout);
      }
    }
    // Asks joined into this one or suppressed are answered.
    asks_.erase(asks_.begin(), asks_.upper_bound(*due));
    ++written_;
  }

  bool done() const {
    return FLAGS_snapshots > 0 && written_ >= FLAGS_snapshots;
  }
  int written() const { return written_; }
  uint64_t total_suppressed() const { return schedule_.total_suppressed(); }

 private:
  // Path -> the ring's mapping and the trigger count last seen.
  struct Watched {
    MappedRing ring;
    uint64_t triggers;
  };

  void ListRings(int64_t now) {
    last_listed_ = now;
    std::map<std::string, Watched> next;
    for (const std::string& path : ListRingFiles(ShmBase(), nullptr)) {
      auto it = watched_.find(path);
      if (it != watched_.end()) {
        next.emplace(path, std::move(it->second));
        continue;
      }
      absl::StatusOr<MappedRing> mapped = MapRing(path);
      if (!mapped.ok()) continue;
      absl::StatusOr<RingCounters> counters = ReadRingCounters(mapped->bytes());
      // Triggers from before it was seen are not this recorder's.
      if (counters.ok()) {
        next.emplace(path,
                     Watched{std::move(*mapped), counters->trigger_count});
      }
    }
    watched_ = std::move(next);
  }

 private:
  SnapshotSchedule schedule_;
  std::map<std::string, Watched> watched_;
  int64_t last_listed_ = 0;
  int written_ = 0;
  PeerSnapshots* peers_ = nullptr;
  // Other nodes' asks waiting, by trigger on this node's clock.
  std::map<int64_t, PeerAsk> asks_;
};

int Record() {
  Recorder recorder;
  if (FLAGS_config.empty()) {
    while (stop_requested == 0 && !recorder.done()) {
      recorder.Poll();
      SleepMs(FLAGS_poll_ms);
    }
  } else {
    absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> config =
        ReadConfigFlag("");
    if (!config.ok()) ExitForUserError(std::string(config.status().message()));
    absl::StatusOr<const Node*> node = ReadNodeFlag(config->message());
    if (!node.ok()) ExitForUserError(std::string(node.status().message()));
    if (*node != nullptr) node_name = (*node)->name()->str();
    // The recorder's own loop is not recorded.
    FLAGS_trace_ring_events = 0;
    ShmEventLoop loop(&config->message(), "aos_trace", *node);
    PeerSnapshots peers(&loop,
                        [&recorder](const PeerAsk& ask) { recorder.Ask(ask); });
    recorder.set_peers(&peers);
    Sender<TraceSnapshot> snapshots = loop.TryMakeSender<TraceSnapshot>("/aos");
    if (snapshots.valid()) snapshot_sender = &snapshots;
    if (*node != nullptr && !peers.can_ask()) {
      fprintf(stderr,
              "aos_trace: no aos.tracing.SnapshotRequest channel on /aos of "
              "%s: other nodes are not asked for their snapshots\n",
              node_name.empty() ? "this node" : node_name.c_str());
    }
    TimerHandler* poll = loop.AddTimer([&]() {
      recorder.Poll();
      if (recorder.done()) loop.Exit();
    });
    loop.OnRun([&]() {
      // Stopped before the loop took over SIGINT and SIGTERM.
      if (stop_requested != 0) loop.Exit();
      poll->Schedule(loop.monotonic_now(),
                     std::chrono::milliseconds(FLAGS_poll_ms));
    });
    loop.Run();
    snapshot_sender = nullptr;
    if (peers.refused() > 0) {
      fprintf(stderr, "aos_trace: %llu snapshot requests refused\n",
              static_cast<unsigned long long>(peers.refused()));
    }
  }
  sched_recorder.reset();
  printf("aos_trace record: %d snapshots written, %llu triggers suppressed\n",
         recorder.written(),
         static_cast<unsigned long long>(recorder.total_suppressed()));
  return 0;
}

int List(const std::string& directory) {
  absl::StatusOr<std::vector<std::string>> paths = ListSnapshots(directory);
  if (!paths.ok()) ExitForUserError(std::string(paths.status().message()));
  for (const std::string& path : *paths) printf("%s\n", path.c_str());
  return 0;
}

int Prune(const std::string& directory) {
  absl::StatusOr<int> removed = PruneSnapshots(directory, FLAGS_keep);
  if (!removed.ok()) ExitForUserError(std::string(removed.status().message()));
  printf("removed %d snapshots of %s\n", *removed, directory.c_str());
  return 0;
}

int Plot(const std::string& snapshot) {
  absl::StatusOr<Timeline> timeline = ReadTimeline(snapshot);
  if (!timeline.ok())
    ExitForUserError(std::string(timeline.status().message()));
  std::string png = FLAGS_png;
  if (png.empty()) {
    png = snapshot.ends_with(".json")
              ? StrCat(snapshot.substr(0, snapshot.size() - 5), ".png")
              : StrCat(snapshot, ".png");
  }
  if (!std::isnan(FLAGS_plot_from_ms) && !std::isnan(FLAGS_plot_to_ms) &&
      FLAGS_plot_from_ms >= FLAGS_plot_to_ms) {
    ExitForUserError(StrCat("--plot_from_ms=", FLAGS_plot_from_ms,
                            " is not before --plot_to_ms=", FLAGS_plot_to_ms));
  }
  const absl::Status status =
      WriteTimelinePlot(*timeline, png, FLAGS_plot_from_ms, FLAGS_plot_to_ms);
  if (!status.ok()) ExitForUserError(std::string(status.message()));
  printf("%s: %zu tracks, %zu runs, %zu marks\n", png.c_str(),
         timeline->rows.size(), timeline->bars.size(), timeline->marks.size());
  return 0;
}

// Writes the snapshots `paths` (the asking node's first) as one timeline.
int Merge(const std::vector<std::string>& paths) {
  std::vector<Trace> traces;
  for (const std::string& path : paths) {
    absl::StatusOr<Trace> trace = ReadTrace(path);
    if (!trace.ok()) ExitForUserError(std::string(trace.status().message()));
    traces.push_back(std::move(*trace));
  }
  absl::StatusOr<Trace> merged = MergeTraces(traces);
  if (!merged.ok()) ExitForUserError(std::string(merged.status().message()));
  const int64_t stamp = merged->info.trigger_ns != 0 ? merged->info.trigger_ns
                                                     : merged->window.begin_ns;
  absl::StatusOr<std::string> path =
      WriteSnapshot(FLAGS_out, *merged, stamp, "merged");
  if (!path.ok()) ExitForUserError(std::string(path.status().message()));
  printf("%s: %zu snapshots, %s\n", path->c_str(), paths.size(),
         StrJoin(merged->info.merged, "; ").c_str());
  return 0;
}

// Writes each aos.tracing.TraceSnapshot of the log at `log_path` as a
// snapshot file again, named with ".logged" after the node.
int FromLog(const std::string& log_path) {
  absl::StatusOr<std::unique_ptr<logging::LogFileReader>> log =
      logging::LogFileReader::Open(log_path);
  if (!log.ok()) ExitForUserError(std::string(log.status().message()));
  int written = 0;
  int refused = 0;
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    if (message->channel->type()->string_view() !=
            TraceSnapshot::GetFullyQualifiedName() ||
        message->context.data == nullptr) {
      continue;
    }
    absl::StatusOr<LoggedSnapshot> logged =
        ReadTraceSnapshot({static_cast<const uint8_t*>(message->context.data),
                           message->context.size});
    if (!logged.ok()) {
      fprintf(stderr, "aos_trace: %s: a message on %s: %s\n", log_path.c_str(),
              message->channel->name()->c_str(),
              std::string(logged.status().message()).c_str());
      ++refused;
      continue;
    }
    const Trace trace = BuildTrace(logged->rings, logged->window, logged->info);
    const int64_t stamp = logged->info.trigger_ns != 0
                              ? logged->info.trigger_ns
                              : logged->window.begin_ns;
    absl::StatusOr<std::string> path = WriteSnapshot(
        FLAGS_out, trace, stamp,
        logged->info.node.empty() ? std::string("logged")
                                  : StrCat(logged->info.node, ".logged"));
    if (!path.ok()) ExitForUserError(std::string(path.status().message()));
    printf("%s: %zu rings, %s, %llu events left out when it was sent\n",
           path->c_str(), logged->rings.size(), logged->info.reason.c_str(),
           static_cast<unsigned long long>(logged->left_out));
    ++written;
  }
  for (const std::string& problem : (*log)->problems()) {
    fprintf(stderr, "aos_trace: %s\n", problem.c_str());
  }
  printf("aos_trace from-log: %d snapshots written, %d refused\n", written,
         refused);
  return 0;
}

int Main(int argc, char** argv) {
  ExitOnFlagError(CheckInRange("--before_ms", FLAGS_before_ms, 0, 3'600'000));
  ExitOnFlagError(CheckInRange("--after_ms", FLAGS_after_ms, 0, 3'600'000));
  ExitOnFlagError(CheckAtLeast("--min_interval_ms", FLAGS_min_interval_ms, 0));
  ExitOnFlagError(CheckInRange("--poll_ms", FLAGS_poll_ms, 1, 1000));
  ExitOnFlagError(CheckNotNegative("--snapshots", FLAGS_snapshots));
  ExitOnFlagError(CheckNotNegative("--keep", FLAGS_keep));
  ExitOnFlagError(CheckInRange("--disk_budget_mb", FLAGS_disk_budget_mb,
                               int64_t{0}, int64_t{1} << 30));
  ExitOnFlagError(
      CheckInRange("--sched_buffer_kb", FLAGS_sched_buffer_kb, 64, 1 << 20));
  if (argc < 2) {
    ExitForUserError(
        "give a command: snapshot, record, list DIR, prune DIR, plot FILE, "
        "merge FILE... or from-log LOG.mcap");
  }
  const std::string command = argv[1];
  if (command == "from-log") {
    if (argc != 3) ExitForUserError("from-log: give one LOG.mcap");
    if (!ListSnapshots(FLAGS_out).ok()) {
      ExitForUserError(StrCat("--out=", FLAGS_out, ": no such directory"));
    }
    return FromLog(argv[2]);
  }
  if (command == "merge") {
    if (argc < 4) ExitForUserError("merge: give two snapshots or more");
    return Merge(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (command == "plot") {
    if (argc != 3) ExitForUserError("plot: give one snapshot file");
    return Plot(argv[2]);
  }
  if (command == "list" || command == "prune") {
    if (argc != 3) ExitForUserError(StrCat(command, ": give one DIR"));
    return command == "list" ? List(argv[2]) : Prune(argv[2]);
  }
  if (argc != 2) ExitForUserError(StrCat("unexpected argument ", argv[2]));
  if (command != "snapshot" && command != "record") {
    ExitForUserError(StrCat("unknown command ", command,
                            ": give snapshot, record, list or prune"));
  }
  // Before waiting: a bad --out is said at once.
  if (ListSnapshots(FLAGS_out).status().ok() == false) {
    ExitForUserError(StrCat("--out=", FLAGS_out, ": no such directory"));
  }
  // Ctrl-C or SIGTERM from here on ends it cleanly (the tracefs instance
  // goes): set before the instance is made, so no signal can leave it.
  signal(SIGINT, RequestStop);
  signal(SIGTERM, RequestStop);
  if (FLAGS_sched_switch) {
    absl::StatusOr<std::unique_ptr<SchedRecorder>> recorder =
        SchedRecorder::Start(FindTracefs(), FLAGS_sched_buffer_kb);
    if (!recorder.ok()) {
      ExitForUserError(StrCat("--sched_switch: ", recorder.status().message()));
    }
    sched_recorder = std::move(*recorder);
  }
  if (command == "record") return Record();
  const int64_t now = NowNs();
  for (int waited = 0; waited < FLAGS_after_ms && stop_requested == 0;
       waited += 10) {
    SleepMs(std::min(10, FLAGS_after_ms - waited));
  }
  if (stop_requested != 0) {
    sched_recorder.reset();
    fprintf(stderr, "aos_trace: snapshot: stopped before it was written\n");
    return 1;
  }
  Snapshot(now, SnapshotCause{"snapshot", 0, nullptr});
  sched_recorder.reset();
  return 0;
}

}  // namespace
}  // namespace aos::tracing

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_trace [--shm_base=DIR] snapshot [--before_ms=N] "
      "[--after_ms=N] [--out=DIR]\n"
      "       aos_trace [--shm_base=DIR] record [--out=DIR] "
      "[--min_interval_ms=N] [--snapshots=N]\n"
      "       (snapshot and record also take --sched_switch: as root, the\n"
      "       kernel's scheduler switches on the loops' CPUs go in too)\n"
      "       aos_trace list DIR\n"
      "       aos_trace prune DIR [--keep=N]\n"
      "       aos_trace plot SNAPSHOT.json [--png=FILE] [--plot_from_ms=X] "
      "[--plot_to_ms=Y]\n"
      "       aos_trace merge ASKING.json ASKED.json... [--out=DIR]\n"
      "       aos_trace from-log LOG.mcap [--out=DIR]\n"
      "The flight recorder: every event loop of the node keeps its recent\n"
      "events in a ring under <shm_base>/aos_trace. snapshot waits\n"
      "--after_ms, then writes every ring's events from --before_ms before\n"
      "the command to --after_ms after it as one Chrome trace (JSON; open it\n"
      "in ui.perfetto.dev). record waits for a loop to cross a --trace_*\n"
      "threshold and writes a snapshot around each trigger, at most one per\n"
      "--min_interval_ms, counting the ones it suppressed. list prints the\n"
      "snapshots of DIR, oldest first; prune removes all but the newest\n"
      "--keep; plot draws a snapshot as a timeline PNG (gnuplot). With\n"
      "--config (a multi-node one), record asks the other nodes' recorders\n"
      "for the window of each trigger of its node, through the message\n"
      "bridge, and answers theirs; merge puts such snapshots on the asking\n"
      "node's clock in one file. from-log writes the snapshots a log kept\n"
      "(/aos aos.tracing.TraceSnapshot) as files again.\n"
      "See docs/tracing.md.");
  return aos::tracing::Main(argc, argv);
}
