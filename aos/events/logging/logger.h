#ifndef AOS_EVENTS_LOGGING_LOGGER_H_
#define AOS_EVENTS_LOGGING_LOGGER_H_

// Records the channels an event loop can read into an MCAP log
// (log_format.h says what goes where).
//
//   aos::ShmEventLoop loop(&config.message(), "aos_logger");
//   auto writer = McapWriter::Create("/tmp/run.mcap", {});
//   auto logger = Logger::Make(&loop, std::move(*writer), {});
//   loop.Run();
//   absl::Status status = (*logger)->Finish();
//
// Make() writes the schemas, channels, configuration and node at once; then
// the logger reads every channel, with one watcher per channel or, given a
// poll_period, with fetchers drained by a phased loop "poll" (either way in
// send order), and has a timer "flush" that writes
// the open chunk out every `flush_period`, so a crash loses at most that
// much. Its callbacks are timed in the loop's reports like any other.
//
// Which channels: those readable on the loop's node that the channel's
// `logger` field (AOS's LoggerConfig) logs on it, and that the
// channel_filter selects. NOT_LOGGED: never. A channel sent on this node:
// LOCAL_LOGGER and LOCAL_AND_REMOTE_LOGGER yes, REMOTE_LOGGER only if its
// logger_nodes list this node (AOS's ChannelMessageIsLoggedOnNode). A
// channel forwarded to this node: yes unless NOT_LOGGED, so the log replays
// on its own (AOS keeps only the delivery times there unless logger_nodes
// list the node). In a config without nodes, LOCAL_LOGGER yes, and a REMOTE
// kind is an error (AOS aborts).
//
// Forwarded channels (sent on another node, readable on this one): each of
// their messages is preceded by a remote record holding its remote fields
// (where and when it was first sent), which an MCAP Message has no room
// for (log_format.h). A single-node log has none.
//
// Path origins: each message that carries origins (Context::origins) is
// preceded by an origins record holding them (log_format.h); a message
// without origins costs nothing more than before.
//
// Never blocking senders: the logger is a reader like any other; if it
// falls behind by more than a channel's queue, the messages it missed are
// gone for it, counted per channel from the gaps in queue_index, logged
// once as a warning per channel, and written into the file
// (kLostMetadata).
//
// Errors: the first failed write (disk full, I/O error) stops recording,
// keeps the status (naming the file) and asks the loop to Exit().
//
// Memory: the writer's chunk buffers are allocated up front and kept, and
// so are the builders of remote and origins records (grown in Make()); its
// message indexes keep their capacity across chunks, so steady-state
// logging allocates only when a chunk holds more messages of a channel than
// any before it (and one chunk-index entry per chunk). The logger is not a
// realtime application: it runs without SCHED_FIFO, and so without the
// allocation guard (docs/logging.md).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/events/event_loop.h"
#include "aos/events/logging/mcap_writer.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::logging {

struct LoggerOptions {
  // Which channels to record (of those readable on the loop's node and
  // logged there by their `logger` field); null: all of them.
  std::function<bool(const Channel&)> channel_filter;
  // How often the open chunk is written out even if it is not full.
  monotonic_clock::duration flush_period = std::chrono::seconds(1);
  // Positive: read every channel with a fetcher from a phased loop "poll"
  // this often (one wakeup per period, however many messages: less
  // interference with the applications recorded; the logger lags by up to
  // a period, which must stay well below the channels'
  // channel_storage_duration). Zero: a watcher per channel (a wakeup per
  // message, recorded at once).
  monotonic_clock::duration poll_period = monotonic_clock::duration::zero();
};

class Logger {
 public:
  // Sets up recording on `event_loop` (before it runs) into `writer`.
  // Errors: nothing to record (no channel readable on the node is logged
  // there and passes the filter), a selected channel's `logger` the node
  // cannot honour (see above; names the channel), or the writer failed (its
  // status names the file).
  static absl::StatusOr<std::unique_ptr<Logger>> Make(
      EventLoop* event_loop, std::unique_ptr<McapWriter> writer,
      LoggerOptions options);
  ~Logger();

  // Writes what is left (with a poll_period, the messages sent since the
  // last poll; the open chunk; lost counts) and closes the file with
  // its summary. Without a poll_period, on a ShmEventLoop, first call its
  // DeliverRemainingMessages(): the watchers' last messages are not
  // delivered when the loop stops. Call once, after the loop stopped. Returns
  // the first error of the whole recording, if any.
  absl::Status Finish();

  // The first write error (OK while recording works).
  const absl::Status& status() const { return status_; }
  // Channels being recorded.
  size_t channel_count() const { return channels_.size(); }
  // Messages recorded, and missed, so far.
  // (Remote and origins records are not counted.)
  uint64_t recorded_messages() const {
    return writer_->message_count() - remote_records_ - origins_records_;
  }
  uint64_t lost_messages() const { return lost_total_; }
  const std::string& path() const { return writer_->path(); }

 private:
  struct RecordedChannel {
    const Channel* channel = nullptr;
    uint16_t mcap_id = 0;
    uint32_t last_queue_index = Context::kInvalidQueueIndex;
    uint64_t lost = 0;
    // Sent from another node: each message gets a remote record.
    bool forwarded = false;
    // With a poll_period: the channel's fetcher, and whether its current
    // message is still to be recorded.
    std::unique_ptr<RawFetcher> fetcher;
    bool pending = false;
  };

  Logger(EventLoop* event_loop, std::unique_ptr<McapWriter> writer);

  absl::Status WriteHeaderRecords(const LoggerOptions& options);
  // Adds the remote records' schema and channel (log_format.h) if a
  // recorded channel is forwarded.
  absl::Status AddRemoteChannelIfForwarded();
  // Adds the origins records' schema and channel (log_format.h).
  absl::Status AddOriginsChannel();
  void Record(RecordedChannel* channel, const Context& context);
  // Records, in send order, every message the fetchers hold that is not
  // recorded yet.
  void Poll();
  void Flush();
  absl::Status WriteLostCounts();
  void Fail(absl::Status status);

  EventLoop* const event_loop_;
  std::unique_ptr<McapWriter> writer_;
  // Stable addresses: watchers point at their entry.
  std::vector<std::unique_ptr<RecordedChannel>> channels_;
  // The remote records' MCAP channel, their builder (reused) and count.
  uint16_t remote_channel_id_ = 0;
  flatbuffers::FlatBufferBuilder remote_builder_;
  uint64_t remote_records_ = 0;
  // The same for the origins records.
  uint16_t origins_channel_id_ = 0;
  flatbuffers::FlatBufferBuilder origins_builder_;
  uint64_t origins_records_ = 0;
  absl::Status status_;
  uint64_t lost_total_ = 0;
  uint64_t lost_written_ = 0;
  bool finished_ = false;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOGGER_H_
