#include "aos/events/logging/mcap_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "aos/events/logging/chunk_compression.h"
#include "aos/events/logging/mcap_records.h"
#include "aos/util/printable.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos::logging {

using mcap::FieldDecoder;
using mcap::Opcode;

struct McapReader::OpenChunk {
  // Position among the pending chunks, for ties between chunks.
  size_t order = 0;
  std::string buffer;
  std::vector<McapMessage> messages;
  size_t next = 0;
  // What it holds in memory, against the budget.
  uint64_t bytes() const {
    return sizeof(OpenChunk) + buffer.capacity() +
           messages.capacity() * sizeof(McapMessage);
  }
  // The time of its next message.
  uint64_t next_time() const { return messages[next].log_time; }
};

bool McapReader::Later(const std::unique_ptr<OpenChunk>& a,
                       const std::unique_ptr<OpenChunk>& b) {
  return a->next_time() != b->next_time() ? a->next_time() > b->next_time()
                                          : a->order > b->order;
}

namespace {

constexpr uint8_t Op(Opcode opcode) { return static_cast<uint8_t>(opcode); }

// A Map<string, string>; nullopt if malformed.
std::optional<std::map<std::string, std::string>> DecodeStringMap(
    std::string_view group) {
  std::map<std::string, std::string> result;
  FieldDecoder entries(group);
  while (!entries.rest().empty()) {
    std::optional<std::string_view> key = entries.String();
    std::optional<std::string_view> value = entries.String();
    if (!key.has_value() || !value.has_value()) return std::nullopt;
    result.emplace(*key, *value);
  }
  return result;
}

// A Message record's content; nullopt if malformed. data points into
// `content`.
std::optional<McapMessage> DecodeMessage(std::string_view content) {
  FieldDecoder fields(content);
  McapMessage message;
  std::optional<uint16_t> channel = fields.U16();
  std::optional<uint32_t> sequence = fields.U32();
  std::optional<uint64_t> log_time = fields.U64();
  std::optional<uint64_t> publish_time = fields.U64();
  if (!fields.ok()) return std::nullopt;
  message.channel_id = *channel;
  message.sequence = *sequence;
  message.log_time = *log_time;
  message.publish_time = *publish_time;
  message.data = fields.rest();
  return message;
}

}  // namespace

absl::StatusOr<std::unique_ptr<McapReader>> McapReader::Open(
    std::string_view path, McapReadLimits limits) {
  const std::string path_string(path);
  const std::string shown = InlinePrintable(path, kPrintablePathMaxBytes);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (forever, for a
  // FIFO nobody writes); the fstat below refuses it before any read.
  ScopedFd fd(open(path_string.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    return absl::NotFoundError(
        StrCat(shown, ": cannot open the log: ", std::strerror(errno)));
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat(shown, ": not a regular file (an MCAP log is one)"));
  }
  const size_t size = info.st_size;
  if (size < mcap::kMagic.size() + mcap::kRecordPrefixSize) {
    return absl::InvalidArgumentError(
        StrCat(shown, ": ", size,
               " bytes is too short for an MCAP log (magic and Header)"));
  }
  void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  fd.reset();  // The mapping keeps the file.
  if (mapped == MAP_FAILED) {
    return absl::InternalError(
        StrCat(shown, ": cannot map the log: ", std::strerror(errno)));
  }
  std::unique_ptr<McapReader> reader(new McapReader(
      path, static_cast<const char*>(mapped), size, std::move(limits)));
  if (std::string_view(reader->data_, mcap::kMagic.size()) != mcap::kMagic) {
    return absl::InvalidArgumentError(
        StrCat(shown,
               ": not an MCAP file (it does not start with the MCAP "
               "magic bytes)"));
  }
  std::optional<Record> header = reader->RecordAt(mcap::kMagic.size());
  std::optional<std::string_view> profile;
  std::optional<std::string_view> library;
  if (header.has_value() && header->opcode == Op(Opcode::kHeader)) {
    FieldDecoder fields(header->content);
    profile = fields.String();
    library = fields.String();
  }
  if (!library.has_value()) {
    return absl::InvalidArgumentError(
        StrCat(shown,
               ": the MCAP Header record after the magic is missing "
               "or damaged"));
  }
  reader->library_ = *library;
  if (!reader->ReadSummary()) {
    reader->Scan(mcap::kMagic.size() + mcap::kRecordPrefixSize +
                 header->content.size());
  }
  // A chunk indexed twice is read once: each read would cost its
  // decompression again.
  std::sort(
      reader->pending_.begin(), reader->pending_.end(),
      [](const Pending& a, const Pending& b) { return a.offset < b.offset; });
  reader->pending_.erase(
      std::unique(reader->pending_.begin(), reader->pending_.end(),
                  [](const Pending& a, const Pending& b) {
                    return a.offset == b.offset;
                  }),
      reader->pending_.end());
  std::stable_sort(reader->pending_.begin(), reader->pending_.end(),
                   [](const Pending& a, const Pending& b) {
                     return a.start_time != b.start_time
                                ? a.start_time < b.start_time
                                : a.offset < b.offset;
                   });
  return reader;
}

McapReader::McapReader(std::string_view path, const char* data, size_t size,
                       McapReadLimits limits)
    : path_(path),
      display_path_(InlinePrintable(path, kPrintablePathMaxBytes)),
      data_(data),
      size_(size),
      limits_(std::move(limits)) {}

McapReader::~McapReader() { munmap(const_cast<char*>(data_), size_); }

void McapReader::Problem(std::string_view problem) {
  if (problems_.size() >= kMaxListedProblems) {
    ++unlisted_problems_;
    return;
  }
  problems_.push_back(StrCat(display_path_, ": ", problem));
}

void McapReader::LimitChunkSize(uint64_t max_chunk_bytes, std::string reason) {
  limits_.max_chunk_bytes = max_chunk_bytes;
  limits_.max_chunk_reason = std::move(reason);
}

void McapReader::PushOpen(std::unique_ptr<OpenChunk> chunk) {
  open_bytes_ += chunk->bytes();
  open_.push_back(std::move(chunk));
  std::push_heap(open_.begin(), open_.end(), Later);
}

std::string McapReader::ChunkRefusal(std::string_view compression,
                                     uint64_t compressed,
                                     uint64_t uncompressed) const {
  const std::string sizes = StrCat(uncompressed, " bytes uncompressed from ",
                                   compressed, " compressed");
  const std::optional<uint64_t> most =
      MaxDecompressedSize(compression, compressed);
  if (!most.has_value()) {
    return StrCat("uses the unknown compression ", Printable(compression),
                  " (this reader knows \"\", \"lz4\" and \"zstd\")");
  }
  if (uncompressed > *most) {
    return StrCat("claims ", sizes, ", more than ",
                  compression.empty() ? "an uncompressed chunk"
                                      : StrCat(compression, " data"),
                  " of that size can hold (", *most,
                  "): the file is damaged or forged");
  }
  if (uncompressed > limits_.max_chunk_bytes) {
    return StrCat("claims ", sizes, ", more than the ", limits_.max_chunk_bytes,
                  " bytes a chunk may hold here (", limits_.max_chunk_reason,
                  "); refused");
  }
  const uint64_t held = open_bytes_;
  if (uncompressed > limits_.memory_budget_bytes ||
      held > limits_.memory_budget_bytes - uncompressed) {
    return StrCat("needs ", sizes, " while the chunks open beside it hold ",
                  held, " bytes: over the memory budget of ",
                  limits_.memory_budget_bytes, " bytes for open chunks (",
                  limits_.budget_name, "); refused");
  }
  return "";
}

std::optional<McapReader::Record> McapReader::RecordAt(uint64_t offset) const {
  if (offset > size_ || size_ - offset < mcap::kRecordPrefixSize) {
    return std::nullopt;
  }
  uint64_t length;
  std::memcpy(&length, data_ + offset + 1, sizeof(length));
  if (length > size_ - offset - mcap::kRecordPrefixSize) return std::nullopt;
  return Record{.opcode = static_cast<uint8_t>(data_[offset]),
                .content = std::string_view(
                    data_ + offset + mcap::kRecordPrefixSize, length)};
}

bool McapReader::TakeRecord(const Record& record, uint64_t offset) {
  FieldDecoder fields(record.content);
  switch (static_cast<Opcode>(record.opcode)) {
    case Opcode::kSchema: {
      McapSchema schema;
      std::optional<uint16_t> id = fields.U16();
      std::optional<std::string_view> name = fields.String();
      std::optional<std::string_view> encoding = fields.String();
      std::optional<std::string_view> data = fields.String();
      if (!fields.ok()) break;
      schemas_.try_emplace(*id, McapSchema{.id = *id,
                                           .name = std::string(*name),
                                           .encoding = std::string(*encoding),
                                           .data = std::string(*data)});
      return true;
    }
    case Opcode::kChannel: {
      std::optional<uint16_t> id = fields.U16();
      std::optional<uint16_t> schema_id = fields.U16();
      std::optional<std::string_view> topic = fields.String();
      std::optional<std::string_view> encoding = fields.String();
      std::optional<std::string_view> group = fields.Group();
      if (!fields.ok()) break;
      std::optional<std::map<std::string, std::string>> metadata =
          DecodeStringMap(*group);
      if (!metadata.has_value()) break;
      channels_.try_emplace(
          *id, McapChannel{.id = *id,
                           .schema_id = *schema_id,
                           .topic = std::string(*topic),
                           .message_encoding = std::string(*encoding),
                           .metadata = std::move(*metadata)});
      return true;
    }
    case Opcode::kAttachment: {
      std::optional<uint64_t> log_time = fields.U64();
      std::optional<uint64_t> create_time = fields.U64();
      std::optional<std::string_view> name = fields.String();
      std::optional<std::string_view> media_type = fields.String();
      std::optional<std::string_view> data = fields.LongBytes();
      const size_t covered = record.content.size() - fields.rest().size();
      std::optional<uint32_t> crc = fields.U32();
      if (!fields.ok()) break;
      if (*crc != 0 &&
          *crc != mcap::Crc32(0, record.content.substr(0, covered))) {
        Problem(StrCat("the attachment ", Printable(*name), " at byte ", offset,
                       " fails its CRC; skipped"));
        return true;
      }
      attachments_.push_back(
          McapAttachment{.name = std::string(*name),
                         .media_type = std::string(*media_type),
                         .log_time = *log_time,
                         .create_time = *create_time,
                         .data = std::string(*data)});
      return true;
    }
    case Opcode::kMetadata: {
      std::optional<std::string_view> name = fields.String();
      std::optional<std::string_view> group = fields.Group();
      if (!fields.ok()) break;
      std::optional<std::map<std::string, std::string>> metadata =
          DecodeStringMap(*group);
      if (!metadata.has_value()) break;
      metadata_.push_back(McapMetadata{.name = std::string(*name),
                                       .metadata = std::move(*metadata)});
      return true;
    }
    default:
      return true;
  }
  Problem(StrCat("the record at byte ", offset, " (opcode ",
                 static_cast<int>(record.opcode), ") is malformed; skipped"));
  return false;
}

bool McapReader::ReadSummary() {
  const size_t footer_size =
      mcap::kRecordPrefixSize + mcap::kFooterContentSize + mcap::kMagic.size();
  if (size_ < mcap::kMagic.size() + footer_size ||
      std::string_view(data_ + size_ - mcap::kMagic.size(),
                       mcap::kMagic.size()) != mcap::kMagic) {
    Problem(
        "no Footer (the writer did not finish: killed, or out of disk?); "
        "scanning the file from the start, up to its last complete record");
    return false;
  }
  const uint64_t footer_offset = size_ - footer_size;
  std::optional<Record> footer = RecordAt(footer_offset);
  if (!footer.has_value() || footer->opcode != Op(Opcode::kFooter) ||
      footer->content.size() != mcap::kFooterContentSize) {
    Problem("the Footer is damaged; scanning the file from the start");
    return false;
  }
  FieldDecoder fields(footer->content);
  const uint64_t summary_start = *fields.U64();
  const uint64_t summary_offset_start = *fields.U64();
  const uint32_t summary_crc = *fields.U32();
  if (summary_start == 0) return false;  // A finished file without summary.
  const uint64_t summary_end =
      summary_offset_start != 0 ? summary_offset_start : footer_offset;
  if (summary_start > summary_end || summary_end > footer_offset) {
    Problem("the Footer points outside the file; scanning it instead");
    return false;
  }
  if (summary_crc != 0 &&
      summary_crc != mcap::Crc32(0, std::string_view(data_ + summary_start,
                                                     footer_offset + 1 + 8 +
                                                         16 - summary_start))) {
    Problem("the summary section fails its CRC; scanning the file instead");
    return false;
  }
  std::vector<Pending> pending;
  // Attachments and metadata taken, by offset: each is copied once, however
  // often the summary indexes it.
  std::set<uint64_t> taken;
  uint64_t offset = summary_start;
  while (offset < summary_end) {
    std::optional<Record> record = RecordAt(offset);
    if (!record.has_value() ||
        offset + mcap::kRecordPrefixSize + record->content.size() >
            summary_end) {
      Problem(StrCat("the summary record at byte ", offset,
                     " runs past the summary; scanning the file instead"));
      return false;
    }
    FieldDecoder fields(record->content);
    switch (static_cast<Opcode>(record->opcode)) {
      case Opcode::kSchema:
      case Opcode::kChannel:
        if (!TakeRecord(*record, offset)) return false;
        break;
      case Opcode::kChunkIndex: {
        std::optional<uint64_t> start_time = fields.U64();
        std::optional<uint64_t> end_time = fields.U64();
        std::optional<uint64_t> chunk_offset = fields.U64();
        if (!fields.ok()) {
          Problem(StrCat("the Chunk Index at byte ", offset,
                         " is malformed; scanning the file instead"));
          return false;
        }
        pending.push_back(Pending{.start_time = *start_time,
                                  .end_time = *end_time,
                                  .offset = *chunk_offset,
                                  .is_chunk = true});
        break;
      }
      case Opcode::kAttachmentIndex:
      case Opcode::kMetadataIndex: {
        std::optional<uint64_t> target = fields.U64();
        std::optional<Record> indexed;
        if (target.has_value()) indexed = RecordAt(*target);
        const Opcode expected =
            static_cast<Opcode>(record->opcode) == Opcode::kAttachmentIndex
                ? Opcode::kAttachment
                : Opcode::kMetadata;
        if (!indexed.has_value() || indexed->opcode != Op(expected)) {
          Problem(StrCat("the index at byte ", offset,
                         " points at no attachment or metadata record; "
                         "scanning the file instead"));
          return false;
        }
        if (taken.insert(*target).second) TakeRecord(*indexed, *target);
        break;
      }
      default:
        break;
    }
    offset += mcap::kRecordPrefixSize + record->content.size();
  }
  pending_ = std::move(pending);
  read_summary_ = true;
  return true;
}

void McapReader::Scan(uint64_t offset) {
  schemas_.clear();
  channels_.clear();
  attachments_.clear();
  metadata_.clear();
  pending_.clear();
  while (offset < size_) {
    std::optional<Record> record = RecordAt(offset);
    if (!record.has_value()) {
      // A file cut off right after the data section's end is complete.
      if (size_ - offset >= mcap::kMagic.size() &&
          std::string_view(data_ + offset, mcap::kMagic.size()) ==
              mcap::kMagic) {
        return;
      }
      Problem(StrCat("the file ends inside the record at byte ", offset, " (",
                     size_ - offset,
                     " bytes left): it was cut short; everything before it "
                     "is read"));
      return;
    }
    FieldDecoder fields(record->content);
    switch (static_cast<Opcode>(record->opcode)) {
      case Opcode::kChunk: {
        std::optional<uint64_t> start_time = fields.U64();
        std::optional<uint64_t> end_time = fields.U64();
        if (fields.ok()) {
          pending_.push_back(Pending{.start_time = *start_time,
                                     .end_time = *end_time,
                                     .offset = offset,
                                     .is_chunk = true});
        }
        break;
      }
      case Opcode::kMessage: {
        std::optional<McapMessage> message = DecodeMessage(record->content);
        if (message.has_value()) {
          pending_.push_back(Pending{.start_time = message->log_time,
                                     .end_time = message->log_time,
                                     .offset = offset,
                                     .is_chunk = false});
        }
        break;
      }
      case Opcode::kDataEnd:
      case Opcode::kFooter:
        return;
      default:
        TakeRecord(*record, offset);
        break;
    }
    offset += mcap::kRecordPrefixSize + record->content.size();
  }
}

void McapReader::OpenPending(const Pending& pending) {
  auto chunk = std::make_unique<OpenChunk>();
  chunk->order = next_pending_;
  std::optional<Record> record = RecordAt(pending.offset);
  if (!pending.is_chunk) {
    std::optional<McapMessage> message = DecodeMessage(record->content);
    chunk->messages.push_back(*message);
    PushOpen(std::move(chunk));
    return;
  }
  const std::string where =
      StrCat("the chunk at byte ", pending.offset, " (messages from ",
             pending.start_time, " to ", pending.end_time, " ns)");
  if (!record.has_value() || record->opcode != Op(Opcode::kChunk)) {
    Problem(StrCat(where, " is missing or cut short; its messages are lost"));
    return;
  }
  FieldDecoder fields(record->content);
  fields.U64();
  fields.U64();
  std::optional<uint64_t> uncompressed_size = fields.U64();
  std::optional<uint32_t> crc = fields.U32();
  std::optional<std::string_view> compression = fields.String();
  std::optional<std::string_view> records = fields.LongBytes();
  if (!fields.ok()) {
    Problem(StrCat(where, " is malformed; its messages are lost"));
    return;
  }
  // The chunk header has no CRC and may be forged: its size is bounded
  // before anything is allocated for it.
  if (const std::string refusal =
          ChunkRefusal(*compression, records->size(), *uncompressed_size);
      !refusal.empty()) {
    Problem(StrCat(where, " ", refusal, "; its messages are lost"));
    return;
  }
  if (absl::Status status = DecompressChunk(*compression, *records,
                                            *uncompressed_size, &chunk->buffer);
      !status.ok()) {
    Problem(StrCat(where, ": ", status.message(), "; its messages are lost"));
    return;
  }
  if (*crc != 0 && *crc != mcap::Crc32(0, chunk->buffer)) {
    Problem(StrCat(where,
                   " fails its CRC (the file is damaged); its messages are "
                   "lost"));
    return;
  }
  std::string_view rest = chunk->buffer;
  while (!rest.empty()) {
    FieldDecoder prefix(rest);
    std::optional<uint8_t> opcode = prefix.U8();
    std::optional<std::string_view> content = prefix.LongBytes();
    if (!prefix.ok()) {
      Problem(StrCat(where,
                     " holds a record that runs past its end; the "
                     "messages after it are lost"));
      break;
    }
    rest = prefix.rest();
    if (*opcode == Op(Opcode::kMessage)) {
      std::optional<McapMessage> message = DecodeMessage(*content);
      if (message.has_value()) chunk->messages.push_back(*message);
    } else if (*opcode == Op(Opcode::kSchema) ||
               *opcode == Op(Opcode::kChannel)) {
      TakeRecord(Record{.opcode = *opcode, .content = *content},
                 pending.offset);
    }
  }
  std::stable_sort(chunk->messages.begin(), chunk->messages.end(),
                   [](const McapMessage& a, const McapMessage& b) {
                     return a.log_time < b.log_time;
                   });
  if (chunk->messages.empty()) return;
  chunk->messages.shrink_to_fit();
  // The index of its messages counts too.
  const uint64_t held = open_bytes_;
  if (held + chunk->bytes() > limits_.memory_budget_bytes) {
    Problem(StrCat(where, " holds ", chunk->messages.size(),
                   " messages, which with its ", *uncompressed_size,
                   " bytes uncompressed take ", chunk->bytes(),
                   " bytes while the chunks open beside it hold ", held,
                   " bytes: over the memory budget of ",
                   limits_.memory_budget_bytes, " bytes for open chunks (",
                   limits_.budget_name, "); refused, its messages are lost"));
    return;
  }
  PushOpen(std::move(chunk));
}

std::optional<McapMessage> McapReader::Next() {
  retired_.reset();
  while (true) {
    // The open chunk with the earliest next message: the heap's top, so a
    // message costs O(log open chunks), however many a forged file keeps
    // open at once.
    OpenChunk* earliest = open_.empty() ? nullptr : open_.front().get();
    // A chunk not read yet may hold earlier messages. Only earlier ones:
    // one starting at the same time comes later in order anyway, so it is
    // opened only once the open chunks have moved past that time (chunks
    // that start together, as copies of one do, are then open one at a
    // time).
    if (next_pending_ < pending_.size() &&
        (earliest == nullptr ||
         pending_[next_pending_].start_time <
             earliest->messages[earliest->next].log_time)) {
      OpenPending(pending_[next_pending_]);
      ++next_pending_;
      continue;
    }
    if (earliest == nullptr) {
      if (unlisted_problems_ > 0 && !unlisted_said_) {
        unlisted_said_ = true;
        problems_.push_back(StrCat(display_path_, ": ", unlisted_problems_,
                                   " more problems after the first ",
                                   kMaxListedProblems,
                                   " were not listed one by one"));
      }
      return std::nullopt;
    }
    std::pop_heap(open_.begin(), open_.end(), Later);
    McapMessage message = earliest->messages[earliest->next++];
    if (earliest->next == earliest->messages.size()) {
      open_bytes_ -= earliest->bytes();
      retired_ = std::move(open_.back());
      open_.pop_back();
    } else {
      std::push_heap(open_.begin(), open_.end(), Later);
    }
    return message;
  }
}

}  // namespace aos::logging
