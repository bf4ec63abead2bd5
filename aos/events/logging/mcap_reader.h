#ifndef AOS_EVENTS_LOGGING_MCAP_READER_H_
#define AOS_EVENTS_LOGGING_MCAP_READER_H_

// Reads any MCAP file (https://mcap.dev/spec) and yields its messages in
// log-time order, through damage.
//
//   auto reader = McapReader::Open("/tmp/run.mcap");
//   if (!reader.ok()) { ... the message names the file and what is wrong }
//   while (std::optional<McapMessage> message = (*reader)->Next()) {
//     const McapChannel& channel =
//     (*reader)->channels().at(message->channel_id);
//     ...
//   }
//   for (const std::string& problem : (*reader)->problems()) ...
//
// Finding the records: a file with a Footer and a summary section (one a
// writer closed) is read through its summary: schemas, channels, the chunk
// index (chunks are read only when their time comes), attachment and
// metadata indexes. A file without one (the writer was killed, or wrote no
// summary), or whose summary is damaged, is scanned record by record from
// the start, up to the last complete record.
//
// Damage is not fatal: a chunk whose CRC does not match or that does not
// decompress, a file cut short inside a record, or a summary that does not
// check out is one sentence in problems() naming the file, the byte offset
// and what was skipped; everything else is still read. Only a file that is
// not MCAP at all (no magic, no Header) fails Open().
//
// Order: messages come in log_time order; ties in file order. Chunks are
// decompressed one at a time as the time they cover comes, so memory holds
// only the chunks whose time ranges overlap the current time.
//
// The file is mapped read-only; its size is taken at Open().

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace aos::logging {

struct McapSchema {
  uint16_t id = 0;
  std::string name;
  std::string encoding;
  std::string data;
};

struct McapChannel {
  uint16_t id = 0;
  // 0: no schema.
  uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;
  std::map<std::string, std::string> metadata;
};

struct McapAttachment {
  std::string name;
  std::string media_type;
  uint64_t log_time = 0;
  uint64_t create_time = 0;
  std::string data;
};

struct McapMetadata {
  std::string name;
  std::map<std::string, std::string> metadata;
};

struct McapMessage {
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  // Nanoseconds, in whatever clock the writer chose (docs/logging.md says
  // which for aos logs).
  uint64_t log_time = 0;
  uint64_t publish_time = 0;
  // Valid until the next call to Next() (or the reader's destruction).
  std::string_view data;
};

class McapReader {
 public:
  // Maps `path` and finds its records (see above). Errors name the file:
  // cannot open, empty, not MCAP.
  static absl::StatusOr<std::unique_ptr<McapReader>> Open(
      std::string_view path);
  ~McapReader();

  McapReader(const McapReader&) = delete;
  McapReader& operator=(const McapReader&) = delete;

  // The next message in log_time order, or nullopt after the last.
  std::optional<McapMessage> Next();

  // Schemas and channels by id. Schemas and channels found only inside
  // chunks appear once those chunks are read.
  const std::map<uint16_t, McapSchema>& schemas() const { return schemas_; }
  const std::map<uint16_t, McapChannel>& channels() const { return channels_; }
  // In file order.
  const std::vector<McapAttachment>& attachments() const {
    return attachments_;
  }
  const std::vector<McapMetadata>& metadata() const { return metadata_; }

  // True when the records were found through the summary section.
  bool read_summary() const { return read_summary_; }
  // The Header's library field.
  const std::string& library() const { return library_; }
  // What was damaged and skipped, one sentence each, in the order found.
  const std::vector<std::string>& problems() const { return problems_; }
  const std::string& path() const { return path_; }

 private:
  // A chunk (or a message outside chunks) not read yet.
  struct Pending {
    uint64_t start_time;
    uint64_t end_time;
    uint64_t offset;
    bool is_chunk;
  };
  // The messages of one read chunk, in time order, and the buffer they
  // point into.
  struct OpenChunk;

  McapReader(std::string_view path, const char* data, size_t size);

  void Problem(std::string problem);
  // The record at `offset`: its opcode and content, or nullopt if the file
  // ends inside it.
  struct Record {
    uint8_t opcode;
    std::string_view content;
  };
  std::optional<Record> RecordAt(uint64_t offset) const;

  bool ReadSummary();
  void Scan(uint64_t offset);
  // Takes a Schema, Channel, Attachment or Metadata record; false if it is
  // malformed.
  bool TakeRecord(const Record& record, uint64_t offset);
  // Decompresses and checks the chunk (or takes the lone message) of
  // `pending`; adds it to open_ unless it holds no message.
  void OpenPending(const Pending& pending);

  const std::string path_;
  const char* const data_;
  const size_t size_;
  std::string library_;
  bool read_summary_ = false;
  std::map<uint16_t, McapSchema> schemas_;
  std::map<uint16_t, McapChannel> channels_;
  std::vector<McapAttachment> attachments_;
  std::vector<McapMetadata> metadata_;
  std::vector<std::string> problems_;

  // Sorted by start time, then offset; next_pending_ is the first not read.
  std::vector<Pending> pending_;
  size_t next_pending_ = 0;
  std::vector<std::unique_ptr<OpenChunk>> open_;
  // The chunk the last message came from, once exhausted: kept until the
  // next call so that message's data stays valid.
  std::unique_ptr<OpenChunk> retired_;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_MCAP_READER_H_
