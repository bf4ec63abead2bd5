#ifndef AOS_EVENTS_LOGGING_LOG_FILE_READER_H_
#define AOS_EVENTS_LOGGING_LOG_FILE_READER_H_

// Reads an aos log (an MCAP file aos_logger wrote; log_format.h) back as
// aos messages: the channel of the logged configuration, the context the
// watchers saw, and the bytes, in the order they were sent.
//
//   auto log = LogFileReader::Open("/tmp/run.mcap");
//   if (!log.ok()) aos::ExitForUserError(log.status().message());
//   while (std::optional<LogMessage> message = (*log)->Next()) {
//     if (message->channel->name()->string_view() == "/aos") ...
//     const auto* report =
//         flatbuffers::GetRoot<aos::timing::Report>(message->context.data);
//   }
//   for (const std::string& problem : (*log)->problems()) ... (stderr)
//
// Damage: as McapReader, a cut-short file (a killed logger) or a damaged
// chunk costs only what is damaged; each is a sentence in problems(),
// which grows while reading (a chunk is checked when its time comes).
//
// Hostile logs (docs/logging.md): reading is bounded as McapReader's is, and
// a chunk may hold at most what aos_logger can have written for the log's
// channels: kMaxChunkSize - 1 bytes plus the largest record its channels'
// max_size allows (log_format.h). A chunk claiming more, or one that would
// take the chunks open at once over LogReadOptions::memory_budget_bytes, is
// refused (a problem naming the file, its offset and the sizes); reading
// goes on. Strings from the log in problems() are escaped and bounded
// (aos::Printable).
//
// Forwarded messages (of a channel sent on another node) get their remote
// fields from the remote record the logger wrote before each
// (log_format.h). A record that is missing or malformed (damage, a
// hand-made log) never stops reading: the message comes with unknown remote
// fields (see LogMessage), and problems() says so once per channel (and
// once for malformed records).
//
// Path origins: each message comes with the origins it carried
// (Context::origins), from the origins record the logger wrote before it,
// or none if it had no record (log_format.h). They are unknown
// (LogMessage::origins_known false, Context::origins empty) in a log
// written before origins were recorded (records_origins() false), and for
// a message whose record is damaged: malformed (it does not verify, a field
// is missing) or holding origins that cannot be true (PathOrigins::FromRaw
// with the message's send time: more than kMaxPathOrigins, id 0, 0 hops, an
// id twice, later than the message). problems() says so once per channel.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/origins_record.h"
#include "aos/events/logging/remote_record.h"
#include "aos/util/uuid.h"

namespace aos::logging {

// The alignment of LogMessage::context.data: that of every flatbuffer scalar
// and struct a channel's type can hold.
inline constexpr size_t kLogMessageAlignment = 16;

struct LogReadOptions {
  // The most memory the chunks open at the same time may hold together
  // (McapReadLimits::memory_budget_bytes).
  uint64_t memory_budget_bytes = kDefaultLogMemoryBytes;
  // How a user raises it, said when a chunk is refused.
  std::string budget_name = "LogReadOptions::memory_budget_bytes";
};

struct LogMessage {
  // The channel in configuration(); never null.
  const Channel* channel = nullptr;
  // As a watcher on the logging node saw the message: monotonic and
  // realtime event times (the send times), queue_index, size and data.
  // Remote fields: for a local message, the local ones and the logging
  // node's boot (all zeros if the log does not name it); for a forwarded
  // message, the recorded ones (where it was first sent), or, if its remote
  // record is missing or malformed, unknown: min_time times,
  // kInvalidQueueIndex and an all-zero source_boot_uuid. data is valid
  // until the next Next(), and aligned to kLogMessageAlignment bytes (the
  // bytes inside a chunk are not: flatbuffers reads scalars in place, so a
  // message that is not aligned is copied). context.origins: the path
  // origins the message carried if origins_known, else empty.
  Context context;
  // False in a log without origins records and for a message whose origins
  // record is damaged (see LogFileReader).
  bool origins_known = true;
};

class LogFileReader {
 public:
  // Opens the log at `path`. Errors name the file: cannot open, not a
  // regular file (never waits on a FIFO), not MCAP, or not an aos log (no
  // configuration attached, or one that does not verify). Decompresses
  // nothing yet.
  static absl::StatusOr<std::unique_ptr<LogFileReader>> Open(
      std::string_view path, LogReadOptions options = {});

  // The next message in send order (ties: file order), or nullopt at the
  // end. Messages of MCAP channels that match no channel of the
  // configuration are skipped (one problem per such channel); remote
  // records are not messages, they fill the remote fields.
  std::optional<LogMessage> Next();

  // The flattened configuration the logger ran with (schemas embedded).
  const Configuration* configuration() const {
    return flatbuffers::GetRoot<Configuration>(config_.data());
  }
  // The node the log was recorded on: its name ("" in a single-node
  // system) and the node of configuration() (null in a single-node one).
  const std::string& node_name() const { return node_name_; }
  const Node* node() const { return node_; }
  // The channels recorded, in the order of configuration().
  std::vector<const Channel*> logged_channels() const;
  // Whether the log records the messages' path origins (it has the origins
  // records' channel, log_format.h): false for a log written before they
  // were, whose messages' origins are unknown.
  bool records_origins() const { return records_origins_; }
  // Messages the logger missed because it fell behind, by channel.
  const std::map<const Channel*, uint64_t>& lost_messages() const {
    return lost_;
  }
  // What was damaged and skipped; see the header comment.
  const std::vector<std::string>& problems() const { return problems_; }
  const std::string& path() const { return mcap_->path(); }
  // The path as problems show it (aos::InlinePrintable).
  const std::string& display_path() const { return mcap_->display_path(); }

 private:
  explicit LogFileReader(std::unique_ptr<McapReader> mcap);

  // What an MCAP channel of the log holds.
  struct LoggedChannel {
    // The channel of configuration() it was recorded from; null: none (its
    // messages are skipped), or the remote or origins records' channel.
    const Channel* channel = nullptr;
    // Sent on another node: its messages have remote records.
    bool forwarded = false;
    bool remote_records = false;
    bool origins_records = false;
  };

  // Records written just before the message they belong to (remote and
  // origins records; `Record` has channel_id and queue_index): the latest
  // of each MCAP channel, until a message of that channel comes.
  template <typename Record>
  class PendingRecords {
   public:
    void Keep(const Record& record) { pending_[record.channel_id] = record; }
    // The record of the message (`channel_id`, `queue_index`), if the
    // channel's pending one names it. Either way the channel's record is
    // used up: one naming another message lost that message.
    std::optional<Record> Take(uint16_t channel_id, uint32_t queue_index) {
      auto found = pending_.find(channel_id);
      if (found == pending_.end()) return std::nullopt;
      std::optional<Record> record;
      if (found->second.queue_index == queue_index) record = found->second;
      pending_.erase(found);
      return record;
    }

   private:
    std::map<uint16_t, Record> pending_;
  };

  // The channel of configuration() named `name` of `type`, or null (no
  // maps: the log holds the names as configured). O(log channels).
  const Channel* ChannelByNameAndType(std::string_view name,
                                      std::string_view type) const;
  // What `mcap_channel` holds; a problem (once) if it is nothing known.
  const LoggedChannel& FindChannel(uint16_t mcap_channel);
  // Keeps the remote record in `data` for the message it belongs to.
  void KeepRemoteRecord(std::string_view data, uint64_t log_time);
  // Fills the remote fields of `context`, a message of `mcap_channel`.
  void FillRemoteFields(uint16_t mcap_channel, const LoggedChannel& logged,
                        Context* context);
  // Keeps the origins record in `data` for the message it belongs to; a
  // malformed one makes the next message's origins unknown.
  void KeepOriginsRecord(std::string_view data, uint64_t log_time);
  // Fills the origins of `message`, of `mcap_channel`. `after_malformed`:
  // a malformed origins record just before it, at its time.
  void FillOrigins(uint16_t mcap_channel, bool after_malformed,
                   LogMessage* message);
  // Says (once per MCAP channel) that `message`'s origins record is
  // damaged: `why`.
  void SayDamagedOrigins(uint16_t mcap_channel, const LogMessage& message,
                         std::string_view why);
  // Says (once) that a malformed origins record is followed by no message
  // of its time, if malformed_origins_at_ is set, and clears it.
  void SayStrayOrigins();
  void SyncProblems();

  std::unique_ptr<McapReader> mcap_;
  std::string config_;
  // configuration()'s channels by (name, type), the first of each; the views
  // point into config_.
  std::map<std::pair<std::string_view, std::string_view>, const Channel*>
      channels_by_name_;
  std::string node_name_;
  const Node* node_ = nullptr;
  UUID boot_uuid_;
  // Indexed by MCAP channel id, filled on first use.
  std::map<uint16_t, LoggedChannel> channels_;
  PendingRecords<RemoteRecord> remote_records_;
  bool records_origins_ = false;
  PendingRecords<OriginsRecord> origins_records_;
  // The log time of a malformed origins record read last: the message just
  // after it, at that time, is the one it belonged to.
  std::optional<uint64_t> malformed_origins_at_;
  // MCAP channels with a message whose remote fields are unknown (said
  // once each), and whether a malformed record was said.
  std::set<uint16_t> unknown_remote_said_;
  bool malformed_remote_said_ = false;
  // The same for damaged origins records, and for a malformed one followed
  // by no message of its time.
  std::set<uint16_t> damaged_origins_said_;
  bool stray_origins_said_ = false;
  std::map<const Channel*, uint64_t> lost_;
  std::vector<std::string> problems_;
  // The last message, copied here when its bytes in the chunk are not
  // aligned.
  struct alignas(kLogMessageAlignment) AlignedBlock {
    char bytes[kLogMessageAlignment];
  };
  std::vector<AlignedBlock> aligned_;
  size_t mcap_problems_seen_ = 0;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_FILE_READER_H_
