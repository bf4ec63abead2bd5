#ifndef AOS_EVENTS_LOGGING_MCAP_WRITER_H_
#define AOS_EVENTS_LOGGING_MCAP_WRITER_H_

// Writes an MCAP file (https://mcap.dev/spec): chunked, compressed, indexed,
// and readable up to its last finished chunk if the writer dies.
//
//   auto writer = McapWriter::Create("/tmp/run.mcap", {});
//   if (!writer.ok()) { ... (*writer).status().message() names the path }
//   uint16_t schema = (*writer)->AddSchema("aos.examples.Ping", "flatbuffer",
//                                          bfbs);
//   uint16_t channel = (*writer)->AddChannel(schema, "/test", "flatbuffer",
//                                            {{"aos_type", "..."}});
//   status = (*writer)->WriteMessage(channel, 0, log_time, publish_time, data);
//   status = (*writer)->Close();
//
// Layout: magic, Header, then the data section: every Schema, Channel,
// Attachment and Metadata record as it is added (outside chunks, so a
// reader that scans the file meets them before any message), and messages
// in Chunks of about `chunk_size` uncompressed bytes, each chunk followed by
// one Message Index record per channel in it. Close() adds Data End, the
// summary section (schemas, channels, statistics, chunk, attachment and
// metadata indexes), summary offsets, Footer and the closing magic.
//
// Durability: a chunk is written to the file (write(2), no fsync) as soon as
// it is full, or when Flush() is called; a process killed at any moment
// leaves a file whose finished chunks and other records are complete. Only
// the messages of the open chunk are lost.
//
// Errors: a failed write (disk full, I/O error) returns a status naming the
// path and the system's reason; the writer then refuses everything
// (returning that status again), so the file ends at the last complete
// record.
//
// Memory: the open chunk and its compressed form are buffers kept across
// chunks, and per-channel message indexes keep their capacity, so once the
// buffers have grown to a chunk's size, WriteMessage allocates only when a
// chunk holds more messages of a channel than any chunk before (and the
// summary's chunk index grows by one entry per chunk).
//
// Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/events/logging/chunk_compression.h"
#include "aos/util/scoped_fd.h"

namespace aos::logging {

struct McapWriterOptions {
  Compression compression = Compression::kZstd;
  // A chunk is closed once it holds this many uncompressed bytes.
  size_t chunk_size = 1 << 20;
  // The Header's library field.
  std::string library = "aos";
};

class McapWriter {
 public:
  // Creates (or truncates) `path` and writes the magic and Header. Errors
  // name the path and say why it cannot be written.
  static absl::StatusOr<std::unique_ptr<McapWriter>> Create(
      std::string_view path, const McapWriterOptions& options);
  // Closes the file if Close() was not called (a new failure is logged;
  // one a call already returned is not).
  ~McapWriter();

  McapWriter(const McapWriter&) = delete;
  McapWriter& operator=(const McapWriter&) = delete;

  // Writes a Schema record; returns its id (1, 2, ...).
  absl::StatusOr<uint16_t> AddSchema(std::string_view name,
                                     std::string_view encoding,
                                     std::string_view data);
  // Writes a Channel record; returns its id (0, 1, ...). `schema_id` comes
  // from AddSchema (0: no schema).
  absl::StatusOr<uint16_t> AddChannel(
      uint16_t schema_id, std::string_view topic,
      std::string_view message_encoding,
      const std::map<std::string, std::string>& metadata);
  // Writes an Attachment record (a file stored in the log).
  absl::Status AddAttachment(std::string_view name, std::string_view media_type,
                             std::string_view data, uint64_t log_time,
                             uint64_t create_time);
  // Writes a Metadata record. A reader that wants the latest value of a
  // name takes the last record with it.
  absl::Status AddMetadata(std::string_view name,
                           const std::map<std::string, std::string>& metadata);

  // Adds a message to the open chunk (times in nanoseconds), writing the
  // chunk out when it is full. `channel_id` must come from AddChannel
  // (else aborts: our bug).
  absl::Status WriteMessage(uint16_t channel_id, uint32_t sequence,
                            uint64_t log_time, uint64_t publish_time,
                            std::string_view data);

  // Writes the open chunk out now, if it holds anything.
  absl::Status Flush();

  // Writes the open chunk, Data End, the summary and the Footer, and closes
  // the file. Once only; everything after it is refused.
  absl::Status Close();

  const std::string& path() const { return path_; }
  // Bytes written to the file so far.
  uint64_t bytes_written() const { return offset_; }
  // Messages given to WriteMessage so far.
  uint64_t message_count() const { return message_count_; }

 private:
  struct ChunkIndexEntry {
    uint64_t start_time;
    uint64_t end_time;
    uint64_t offset;
    uint64_t length;
    std::vector<std::pair<uint16_t, uint64_t>> message_index_offsets;
    uint64_t message_index_length;
    uint64_t compressed_size;
    uint64_t uncompressed_size;
  };
  struct RecordIndexEntry {
    uint64_t offset;
    uint64_t length;
    uint64_t log_time;
    uint64_t create_time;
    uint64_t data_size;
    std::string name;
    std::string media_type;
  };

  McapWriter(std::string_view path, ScopedFd fd,
             const McapWriterOptions& options);

  // Writes `pieces` to the file, in order, updating offset_ and the data
  // section's CRC (while in the data section).
  absl::Status WriteOut(std::initializer_list<std::string_view> pieces);
  // Writes the records in scratch_ (and clears it).
  absl::Status WriteScratch();
  absl::Status Check() const;
  absl::Status WriteChunk();
  absl::Status WriteSummary();
  // Appends the summary section's records to scratch_, each group's offset
  // and length to `groups`.
  void EncodeSummaryGroups(
      uint64_t summary_start,
      std::vector<std::pair<uint8_t, std::pair<uint64_t, uint64_t>>>* groups);

  const std::string path_;
  ScopedFd fd_;
  const McapWriterOptions options_;
  ChunkCompressor compressor_;
  absl::Status error_;
  bool closed_ = false;
  bool in_data_section_ = true;
  uint64_t offset_ = 0;
  uint32_t data_crc_ = 0;

  // Records about to be written.
  std::string scratch_;
  // The open chunk's records, its time range, and its message index per
  // channel (log time, offset in the chunk).
  std::string chunk_;
  uint64_t chunk_start_time_ = 0;
  uint64_t chunk_end_time_ = 0;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> chunk_message_index_;
  // Channels with messages in the open chunk, in order of their first one.
  std::vector<uint16_t> chunk_channels_;

  // For the summary.
  std::string schema_records_;
  std::string channel_records_;
  uint16_t schema_count_ = 0;
  std::vector<ChunkIndexEntry> chunk_indexes_;
  std::vector<RecordIndexEntry> attachment_indexes_;
  std::vector<RecordIndexEntry> metadata_indexes_;
  std::vector<uint64_t> channel_message_counts_;
  uint64_t message_count_ = 0;
  uint64_t message_start_time_ = 0;
  uint64_t message_end_time_ = 0;
};

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_MCAP_WRITER_H_
