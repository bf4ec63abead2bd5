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
// not MCAP at all (no magic, no Header) fails Open(), as does a path that is
// not a regular file (a FIFO, a device: refused without waiting on it).
//
// Hostile files: whatever the file holds, reading costs bounded memory and
// the problems are safe to print.
// - A chunk is decompressed only when its time comes (the reader needs its
//   messages to go on in time order), one at a time unless chunks overlap in
//   time.
// - Before anything is allocated for a chunk, its claimed uncompressed size
//   is checked against what its compression can expand its bytes to
//   (MaxDecompressedSize), against McapReadLimits::max_chunk_bytes, and,
//   with the chunks still open beside it, against
//   McapReadLimits::memory_budget_bytes. A chunk over any of them is
//   refused: one problem naming the file, its offset and the sizes; its
//   messages are lost and reading goes on with the next. Messages already
//   returned and chunks already open are not affected.
// - A chunk, attachment or metadata record that the summary indexes more
//   than once is read once.
// - Every string taken from the file that reaches a problem is escaped and
//   bounded (aos::Printable), and so is the path. After kMaxListedProblems
//   problems, further ones are only counted; the count is the last problem,
//   once the last message was read.
// Every length field is checked against the bytes that hold it before it is
// used, so other allocations are bounded by the file's size.
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

// What reading may cost (see "Hostile files" above).
inline constexpr uint64_t kDefaultLogMemoryBytes = uint64_t{256} << 20;
struct McapReadLimits {
  // The most uncompressed bytes one chunk may claim.
  uint64_t max_chunk_bytes = kDefaultLogMemoryBytes;
  // Why that is the limit, for the problem that refuses a chunk.
  std::string max_chunk_reason = "the memory budget for open chunks";
  // The most bytes the chunks open at the same time may hold together:
  // their decompressed records and their messages' index.
  uint64_t memory_budget_bytes = kDefaultLogMemoryBytes;
  // How a user raises the budget, for the problem that refuses a chunk
  // (e.g. "--log_memory_mb").
  std::string budget_name = "McapReadLimits::memory_budget_bytes";
};

// Problems listed one by one before they are only counted.
inline constexpr size_t kMaxListedProblems = 100;

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
  // cannot open, not a regular file, empty, not MCAP. No chunk is
  // decompressed yet.
  static absl::StatusOr<std::unique_ptr<McapReader>> Open(
      std::string_view path, McapReadLimits limits = {});
  ~McapReader();

  McapReader(const McapReader&) = delete;
  McapReader& operator=(const McapReader&) = delete;

  // The next message in log_time order, or nullopt after the last.
  std::optional<McapMessage> Next();

  // Lowers (or raises) the per-chunk limit for the chunks not opened yet,
  // e.g. once the caller knows from the file's attachments what its writer
  // can have written; `reason` is said when a chunk is refused for it.
  void LimitChunkSize(uint64_t max_chunk_bytes, std::string reason);

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
  // What was damaged, refused or skipped, one sentence each starting with
  // display_path(), in the order found.
  const std::vector<std::string>& problems() const { return problems_; }
  const std::string& path() const { return path_; }
  // The path as problems show it (aos::InlinePrintable).
  const std::string& display_path() const { return display_path_; }

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
  // Heap order of the open chunks: the one with the earliest next message
  // (ties: the first in order) on top. std::push_heap keeps the largest
  // first, so "less" means "later".
  static bool Later(const std::unique_ptr<OpenChunk>& a,
                    const std::unique_ptr<OpenChunk>& b);

  McapReader(std::string_view path, const char* data, size_t size,
             McapReadLimits limits);

  // Adds "<display_path>: <problem>" (or counts it, past kMaxListedProblems).
  void Problem(std::string_view problem);
  // Why a chunk claiming `uncompressed` bytes from `compressed` cannot be
  // opened now, or empty.
  std::string ChunkRefusal(std::string_view compression, uint64_t compressed,
                           uint64_t uncompressed) const;
  // Adds `chunk` to the open chunks.
  void PushOpen(std::unique_ptr<OpenChunk> chunk);
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
  const std::string display_path_;
  const char* const data_;
  const size_t size_;
  McapReadLimits limits_;
  std::string library_;
  bool read_summary_ = false;
  std::map<uint16_t, McapSchema> schemas_;
  std::map<uint16_t, McapChannel> channels_;
  std::vector<McapAttachment> attachments_;
  std::vector<McapMetadata> metadata_;
  std::vector<std::string> problems_;
  // Problems past kMaxListedProblems, and whether their count was said.
  uint64_t unlisted_problems_ = 0;
  bool unlisted_said_ = false;

  // Sorted by start time, then offset; next_pending_ is the first not read.
  std::vector<Pending> pending_;
  size_t next_pending_ = 0;
  // A heap: the chunk with the earliest next message first (mcap_reader.cc).
  std::vector<std::unique_ptr<OpenChunk>> open_;
  // What the open chunks hold (OpenChunk::bytes()).
  uint64_t open_bytes_ = 0;
  // The chunk the last message came from, once exhausted: kept until the
  // next call so that message's data stays valid.
  std::unique_ptr<OpenChunk> retired_;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_MCAP_READER_H_
