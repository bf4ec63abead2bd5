#include "aos/events/logging/mcap_writer.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aos/events/logging/mcap_records.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::logging {

using mcap::Opcode;
using mcap::RecordEncoder;

absl::StatusOr<std::unique_ptr<McapWriter>> McapWriter::Create(
    std::string_view path, const McapWriterOptions& options) {
  const std::string path_string(path);
  ScopedFd fd(open(path_string.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return absl::PermissionDeniedError(
        StrCat(InlinePrintable(path, kPrintablePathMaxBytes),
               ": cannot create the log file: ", std::strerror(errno)));
  }
  std::unique_ptr<McapWriter> writer(
      new McapWriter(path, std::move(fd), options));
  RecordEncoder header(&writer->scratch_, Opcode::kHeader);
  header.String("");  // profile: none
  header.String(options.library);
  header.Finish();
  writer->scratch_.insert(0, mcap::kMagic);
  if (absl::Status status = writer->WriteScratch(); !status.ok()) {
    return status;
  }
  return writer;
}

McapWriter::McapWriter(std::string_view path, ScopedFd fd,
                       const McapWriterOptions& options)
    : path_(path),
      fd_(std::move(fd)),
      options_(options),
      compressor_(options.compression) {
  // Room for a full chunk plus one large message, so steady-state chunks
  // reuse these buffers.
  chunk_.reserve(options_.chunk_size + (64 << 10));
  compressor_.Reserve(chunk_.capacity());
}

McapWriter::~McapWriter() {
  if (closed_) return;
  if (!error_.ok()) {
    // Whoever got the error reported it; only the file is left to close,
    // which fd_ does.
    return;
  }
  absl::Status status = Close();
  LOG_IF(ERROR, !status.ok()) << status.message();
}

absl::Status McapWriter::Check() const {
  if (!error_.ok()) return error_;
  if (closed_) {
    return absl::FailedPreconditionError(StrCat(path_, ": already closed"));
  }
  return absl::OkStatus();
}

absl::Status McapWriter::WriteOut(
    std::initializer_list<std::string_view> pieces) {
  if (!error_.ok()) return error_;
  iovec vectors[4];
  CHECK_LE(pieces.size(), 4u);
  size_t count = 0;
  size_t total = 0;
  for (std::string_view piece : pieces) {
    if (in_data_section_) data_crc_ = mcap::Crc32(data_crc_, piece);
    vectors[count].iov_base = const_cast<char*>(piece.data());
    vectors[count].iov_len = piece.size();
    total += piece.size();
    ++count;
  }
  size_t first = 0;
  while (total > 0) {
    const ssize_t written = writev(fd_.get(), vectors + first, count - first);
    if (written < 0) {
      if (errno == EINTR) continue;
      error_ = absl::ResourceExhaustedError(
          StrCat(InlinePrintable(path_, kPrintablePathMaxBytes),
                 ": cannot write the log: ", std::strerror(errno)));
      return error_;
    }
    offset_ += written;
    total -= written;
    size_t left = written;
    while (first < count && left >= vectors[first].iov_len) {
      left -= vectors[first].iov_len;
      ++first;
    }
    if (first < count) {
      vectors[first].iov_base =
          static_cast<char*>(vectors[first].iov_base) + left;
      vectors[first].iov_len -= left;
    }
  }
  return absl::OkStatus();
}

absl::Status McapWriter::WriteScratch() {
  absl::Status status = WriteOut({scratch_});
  scratch_.clear();
  return status;
}

absl::StatusOr<uint16_t> McapWriter::AddSchema(std::string_view name,
                                               std::string_view encoding,
                                               std::string_view data) {
  if (absl::Status status = Check(); !status.ok()) return status;
  const uint16_t id = ++schema_count_;
  const size_t start = scratch_.size();
  RecordEncoder record(&scratch_, Opcode::kSchema);
  record.U16(id);
  record.String(name);
  record.String(encoding);
  record.String(data);
  record.Finish();
  schema_records_.append(scratch_, start);
  if (absl::Status status = WriteScratch(); !status.ok()) return status;
  return id;
}

absl::StatusOr<uint16_t> McapWriter::AddChannel(
    uint16_t schema_id, std::string_view topic,
    std::string_view message_encoding,
    const std::map<std::string, std::string>& metadata) {
  if (absl::Status status = Check(); !status.ok()) return status;
  CHECK_LE(schema_id, schema_count_) << "no schema " << schema_id;
  CHECK_LT(channel_message_counts_.size(), 0xffffu) << "too many channels";
  const uint16_t id = channel_message_counts_.size();
  channel_message_counts_.push_back(0);
  chunk_message_index_.emplace_back();
  const size_t start = scratch_.size();
  RecordEncoder record(&scratch_, Opcode::kChannel);
  record.U16(id);
  record.U16(schema_id);
  record.String(topic);
  record.String(message_encoding);
  const size_t map = record.BeginGroup();
  for (const auto& [key, value] : metadata) {
    record.String(key);
    record.String(value);
  }
  record.EndGroup(map);
  record.Finish();
  channel_records_.append(scratch_, start);
  if (absl::Status status = WriteScratch(); !status.ok()) return status;
  return id;
}

absl::Status McapWriter::AddAttachment(std::string_view name,
                                       std::string_view media_type,
                                       std::string_view data, uint64_t log_time,
                                       uint64_t create_time) {
  if (absl::Status status = Check(); !status.ok()) return status;
  RecordEncoder record(&scratch_, Opcode::kAttachment);
  record.U64(log_time);
  record.U64(create_time);
  record.String(name);
  record.String(media_type);
  record.U64(data.size());
  // The CRC covers every field before it: the prefix so far, then the data.
  uint32_t crc = mcap::Crc32(
      0, std::string_view(scratch_).substr(mcap::kRecordPrefixSize));
  crc = mcap::Crc32(crc, data);
  std::string crc_bytes(4, '\0');
  mcap::PatchU32(&crc_bytes, 0, crc);
  // The data is written straight from the caller's buffer; the length
  // covers it and the CRC.
  mcap::PatchU64(&scratch_, 1,
                 scratch_.size() - mcap::kRecordPrefixSize + data.size() + 4);
  const RecordIndexEntry index{.offset = offset_,
                               .length = scratch_.size() + data.size() + 4,
                               .log_time = log_time,
                               .create_time = create_time,
                               .data_size = data.size(),
                               .name = std::string(name),
                               .media_type = std::string(media_type)};
  absl::Status status = WriteOut({scratch_, data, crc_bytes});
  scratch_.clear();
  if (!status.ok()) return status;
  attachment_indexes_.push_back(index);
  return absl::OkStatus();
}

absl::Status McapWriter::AddMetadata(
    std::string_view name, const std::map<std::string, std::string>& metadata) {
  if (absl::Status status = Check(); !status.ok()) return status;
  RecordEncoder record(&scratch_, Opcode::kMetadata);
  record.String(name);
  const size_t map = record.BeginGroup();
  for (const auto& [key, value] : metadata) {
    record.String(key);
    record.String(value);
  }
  record.EndGroup(map);
  record.Finish();
  RecordIndexEntry index{.offset = offset_,
                         .length = scratch_.size(),
                         .log_time = 0,
                         .create_time = 0,
                         .data_size = 0,
                         .name = std::string(name),
                         .media_type = ""};
  if (absl::Status status = WriteScratch(); !status.ok()) return status;
  metadata_indexes_.push_back(std::move(index));
  return absl::OkStatus();
}

absl::Status McapWriter::WriteMessage(uint16_t channel_id, uint32_t sequence,
                                      uint64_t log_time, uint64_t publish_time,
                                      std::string_view data) {
  if (absl::Status status = Check(); !status.ok()) return status;
  CHECK_LT(channel_id, channel_message_counts_.size())
      << "no channel " << channel_id << " in " << path_;
  if (chunk_.empty()) {
    chunk_start_time_ = log_time;
    chunk_end_time_ = log_time;
  } else {
    chunk_start_time_ = std::min(chunk_start_time_, log_time);
    chunk_end_time_ = std::max(chunk_end_time_, log_time);
  }
  if (message_count_ == 0) {
    message_start_time_ = log_time;
    message_end_time_ = log_time;
  } else {
    message_start_time_ = std::min(message_start_time_, log_time);
    message_end_time_ = std::max(message_end_time_, log_time);
  }
  ++message_count_;
  ++channel_message_counts_[channel_id];

  std::vector<std::pair<uint64_t, uint64_t>>& index =
      chunk_message_index_[channel_id];
  if (index.empty()) chunk_channels_.push_back(channel_id);
  index.emplace_back(log_time, chunk_.size());

  RecordEncoder record(&chunk_, Opcode::kMessage);
  record.U16(channel_id);
  record.U32(sequence);
  record.U64(log_time);
  record.U64(publish_time);
  record.Bytes(data);
  record.Finish();
  if (chunk_.size() >= options_.chunk_size) return WriteChunk();
  return absl::OkStatus();
}

absl::Status McapWriter::Flush() {
  if (absl::Status status = Check(); !status.ok()) return status;
  return WriteChunk();
}

absl::Status McapWriter::WriteChunk() {
  if (chunk_.empty()) return absl::OkStatus();
  const std::string_view compressed = compressor_.Compress(chunk_);
  ChunkIndexEntry entry{.start_time = chunk_start_time_,
                        .end_time = chunk_end_time_,
                        .offset = offset_,
                        .length = 0,
                        .message_index_offsets = {},
                        .message_index_length = 0,
                        .compressed_size = compressed.size(),
                        .uncompressed_size = chunk_.size()};
  RecordEncoder record(&scratch_, Opcode::kChunk);
  record.U64(chunk_start_time_);
  record.U64(chunk_end_time_);
  record.U64(chunk_.size());
  record.U32(mcap::Crc32(0, chunk_));
  record.String(CompressionName(options_.compression));
  record.U64(compressed.size());
  mcap::PatchU64(&scratch_, 1,
                 scratch_.size() - mcap::kRecordPrefixSize + compressed.size());
  entry.length = scratch_.size() + compressed.size();

  // The message indexes follow the chunk, one record per channel.
  std::string indexes;
  const uint64_t indexes_start = entry.offset + entry.length;
  for (uint16_t channel : chunk_channels_) {
    entry.message_index_offsets.emplace_back(channel,
                                             indexes_start + indexes.size());
    RecordEncoder index(&indexes, Opcode::kMessageIndex);
    index.U16(channel);
    const size_t array = index.BeginGroup();
    for (const auto& [time, offset] : chunk_message_index_[channel]) {
      index.U64(time);
      index.U64(offset);
    }
    index.EndGroup(array);
    index.Finish();
    chunk_message_index_[channel].clear();
  }
  entry.message_index_length = indexes.size();
  chunk_channels_.clear();
  absl::Status status = WriteOut({scratch_, compressed, indexes});
  scratch_.clear();
  chunk_.clear();
  if (!status.ok()) return status;
  chunk_indexes_.push_back(std::move(entry));
  return absl::OkStatus();
}

void McapWriter::EncodeSummaryGroups(
    uint64_t summary_start,
    std::vector<std::pair<uint8_t, std::pair<uint64_t, uint64_t>>>* groups) {
  auto group = [&](Opcode opcode, auto encode) {
    const size_t start = scratch_.size();
    encode();
    if (scratch_.size() > start) {
      groups->push_back({static_cast<uint8_t>(opcode),
                         {summary_start + start, scratch_.size() - start}});
    }
  };
  group(Opcode::kSchema, [&] { scratch_ += schema_records_; });
  group(Opcode::kChannel, [&] { scratch_ += channel_records_; });
  group(Opcode::kStatistics, [&] {
    RecordEncoder record(&scratch_, Opcode::kStatistics);
    record.U64(message_count_);
    record.U16(schema_count_);
    record.U32(channel_message_counts_.size());
    record.U32(attachment_indexes_.size());
    record.U32(metadata_indexes_.size());
    record.U32(chunk_indexes_.size());
    record.U64(message_start_time_);
    record.U64(message_end_time_);
    const size_t map = record.BeginGroup();
    for (size_t channel = 0; channel < channel_message_counts_.size();
         ++channel) {
      record.U16(channel);
      record.U64(channel_message_counts_[channel]);
    }
    record.EndGroup(map);
    record.Finish();
  });
  group(Opcode::kChunkIndex, [&] {
    for (const ChunkIndexEntry& chunk : chunk_indexes_) {
      RecordEncoder record(&scratch_, Opcode::kChunkIndex);
      record.U64(chunk.start_time);
      record.U64(chunk.end_time);
      record.U64(chunk.offset);
      record.U64(chunk.length);
      const size_t map = record.BeginGroup();
      for (const auto& [channel, offset] : chunk.message_index_offsets) {
        record.U16(channel);
        record.U64(offset);
      }
      record.EndGroup(map);
      record.U64(chunk.message_index_length);
      record.String(CompressionName(options_.compression));
      record.U64(chunk.compressed_size);
      record.U64(chunk.uncompressed_size);
      record.Finish();
    }
  });
  group(Opcode::kAttachmentIndex, [&] {
    for (const RecordIndexEntry& attachment : attachment_indexes_) {
      RecordEncoder record(&scratch_, Opcode::kAttachmentIndex);
      record.U64(attachment.offset);
      record.U64(attachment.length);
      record.U64(attachment.log_time);
      record.U64(attachment.create_time);
      record.U64(attachment.data_size);
      record.String(attachment.name);
      record.String(attachment.media_type);
      record.Finish();
    }
  });
  group(Opcode::kMetadataIndex, [&] {
    for (const RecordIndexEntry& metadata : metadata_indexes_) {
      RecordEncoder record(&scratch_, Opcode::kMetadataIndex);
      record.U64(metadata.offset);
      record.U64(metadata.length);
      record.String(metadata.name);
      record.Finish();
    }
  });
}

absl::Status McapWriter::WriteSummary() {
  {
    RecordEncoder data_end(&scratch_, Opcode::kDataEnd);
    // The CRC covers the data section up to (not including) this record.
    data_end.U32(data_crc_);
    data_end.Finish();
  }
  // Everything from here on is outside the data section.
  if (absl::Status status = WriteScratch(); !status.ok()) return status;
  in_data_section_ = false;

  const uint64_t summary_start = offset_;
  std::vector<std::pair<uint8_t, std::pair<uint64_t, uint64_t>>> groups;
  EncodeSummaryGroups(summary_start, &groups);
  const uint64_t summary_offset_start = summary_start + scratch_.size();
  for (const auto& [opcode, range] : groups) {
    RecordEncoder record(&scratch_, Opcode::kSummaryOffset);
    record.U8(opcode);
    record.U64(range.first);
    record.U64(range.second);
    record.Finish();
  }
  RecordEncoder footer(&scratch_, Opcode::kFooter);
  footer.U64(summary_start);
  footer.U64(summary_offset_start);
  footer.U32(0);
  footer.Finish();
  // The CRC covers the summary up to and including summary_offset_start.
  mcap::PatchU32(&scratch_, scratch_.size() - 4,
                 mcap::Crc32(0, std::string_view(scratch_).substr(
                                    0, scratch_.size() - 4)));
  scratch_ += mcap::kMagic;
  return WriteScratch();
}

absl::Status McapWriter::Close() {
  absl::Status status = Check();
  if (status.ok()) status = WriteChunk();
  if (status.ok()) status = WriteSummary();
  closed_ = true;
  // A full disk may show first at close(), so its error is reported.
  if (fd_.Close() != 0 && status.ok()) {
    status = absl::ResourceExhaustedError(
        StrCat(path_, ": cannot close the log: ", std::strerror(errno)));
  }
  return status;
}

}  // namespace aos::logging
