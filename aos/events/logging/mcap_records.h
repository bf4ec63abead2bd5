#ifndef AOS_EVENTS_LOGGING_MCAP_RECORDS_H_
#define AOS_EVENTS_LOGGING_MCAP_RECORDS_H_

// The byte level of MCAP (https://mcap.dev/spec, major version 0): record
// opcodes, the magic, and how fields are encoded. The writer
// (mcap_writer.h) appends records with RecordEncoder; the reader
// (mcap_reader.h) takes them apart with FieldDecoder.
//
//   std::string out;
//   RecordEncoder record(&out, Opcode::kMetadata);
//   record.String("aos");
//   ...
//   record.Finish();  // fills in the record's length
//
// Encoding (all integers little-endian): a record is opcode (uint8), content
// length (uint64), content. Strings and byte blocks are a uint32 length and
// the bytes; maps and arrays are a uint32 byte length and the entries. A
// Chunk's records and an Attachment's data have a uint64 length instead.

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace aos::logging::mcap {

enum class Opcode : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0a,
  kStatistics = 0x0b,
  kMetadata = 0x0c,
  kMetadataIndex = 0x0d,
  kSummaryOffset = 0x0e,
  kDataEnd = 0x0f,
};

// "\x89MCAP0\r\n": first and last 8 bytes of every file.
inline constexpr std::string_view kMagic{"\x89MCAP0\r\n", 8};
// Opcode and content length.
inline constexpr size_t kRecordPrefixSize = 1 + 8;
// Footer content: summary_start, summary_offset_start, summary_crc.
inline constexpr size_t kFooterContentSize = 8 + 8 + 4;

// Appends one record to a string. Cheap: appends only (the string's capacity
// is kept by callers that clear and reuse it, so steady state allocates
// nothing).
class RecordEncoder {
 public:
  // Starts a record of `opcode` at the end of `out`.
  RecordEncoder(std::string* out, Opcode opcode);
  RecordEncoder(const RecordEncoder&) = delete;
  RecordEncoder& operator=(const RecordEncoder&) = delete;

  void U8(uint8_t value) { Append(&value, 1); }
  void U16(uint16_t value) { Append(&value, 2); }
  void U32(uint32_t value) { Append(&value, 4); }
  void U64(uint64_t value) { Append(&value, 8); }
  // uint32 length + bytes.
  void String(std::string_view value);
  // Raw bytes, no length (a Message's data, which runs to the record's end).
  void Bytes(std::string_view value) { Append(value.data(), value.size()); }
  // Starts a map or array: a uint32 byte length filled in by EndGroup().
  size_t BeginGroup();
  void EndGroup(size_t group);

  // Fills in the content length. Must be called once, last.
  void Finish();

 private:
  void Append(const void* data, size_t size) {
    out_->append(static_cast<const char*>(data), size);
  }

  std::string* const out_;
  const size_t start_;
};

// The CRC-32 (ISO-HDLC, zlib's) MCAP records carry, continued from `crc`
// over `data` (start with 0). Computed by libdeflate (carry-less multiply).
uint32_t Crc32(uint32_t crc, std::string_view data);

// Overwrites 4 or 8 bytes of `out` at `offset` (lengths known only later).
void PatchU32(std::string* out, size_t offset, uint32_t value);
void PatchU64(std::string* out, size_t offset, uint64_t value);

// Reads fields from a record's content, front to back, never past its end:
// each getter returns nullopt once the content is too short (a truncated or
// corrupt record), and so does every later one.
class FieldDecoder {
 public:
  explicit FieldDecoder(std::string_view content) : rest_(content) {}

  std::optional<uint8_t> U8() { return Fixed<uint8_t>(); }
  std::optional<uint16_t> U16() { return Fixed<uint16_t>(); }
  std::optional<uint32_t> U32() { return Fixed<uint32_t>(); }
  std::optional<uint64_t> U64() { return Fixed<uint64_t>(); }
  // uint32 length + bytes.
  std::optional<std::string_view> String();
  // uint64 length + bytes.
  std::optional<std::string_view> LongBytes();
  // `size` raw bytes.
  std::optional<std::string_view> Take(uint64_t size);
  // A map or array: its entries, for another FieldDecoder.
  std::optional<std::string_view> Group() { return String(); }
  // Everything not read yet.
  std::string_view rest() const { return rest_; }
  bool ok() const { return ok_; }

 private:
  template <typename T>
  std::optional<T> Fixed() {
    std::optional<std::string_view> bytes = Take(sizeof(T));
    if (!bytes.has_value()) return std::nullopt;
    T value;
    std::memcpy(&value, bytes->data(), sizeof(T));
    return value;
  }

  std::string_view rest_;
  bool ok_ = true;
};

}  // namespace aos::logging::mcap

#endif  // AOS_EVENTS_LOGGING_MCAP_RECORDS_H_
