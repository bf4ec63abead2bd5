#include "aos/events/logging/mcap_records.h"

#include <endian.h>
#include <libdeflate.h>

static_assert(__BYTE_ORDER == __LITTLE_ENDIAN,
              "MCAP is little-endian; this encoder copies integers as they "
              "are in memory");

namespace aos::logging::mcap {

RecordEncoder::RecordEncoder(std::string* out, Opcode opcode)
    : out_(out), start_(out->size()) {
  U8(static_cast<uint8_t>(opcode));
  U64(0);
}

void RecordEncoder::String(std::string_view value) {
  U32(static_cast<uint32_t>(value.size()));
  Bytes(value);
}

size_t RecordEncoder::BeginGroup() {
  const size_t group = out_->size();
  U32(0);
  return group;
}

void RecordEncoder::EndGroup(size_t group) {
  PatchU32(out_, group, static_cast<uint32_t>(out_->size() - group - 4));
}

void RecordEncoder::Finish() {
  PatchU64(out_, start_ + 1, out_->size() - start_ - kRecordPrefixSize);
}

uint32_t Crc32(uint32_t crc, std::string_view data) {
  return libdeflate_crc32(crc, data.data(), data.size());
}

void PatchU32(std::string* out, size_t offset, uint32_t value) {
  std::memcpy(out->data() + offset, &value, sizeof(value));
}

void PatchU64(std::string* out, size_t offset, uint64_t value) {
  std::memcpy(out->data() + offset, &value, sizeof(value));
}

std::optional<std::string_view> FieldDecoder::Take(uint64_t size) {
  if (!ok_ || size > rest_.size()) {
    ok_ = false;
    return std::nullopt;
  }
  std::string_view taken = rest_.substr(0, size);
  rest_.remove_prefix(size);
  return taken;
}

std::optional<std::string_view> FieldDecoder::String() {
  std::optional<uint32_t> size = U32();
  if (!size.has_value()) return std::nullopt;
  return Take(*size);
}

std::optional<std::string_view> FieldDecoder::LongBytes() {
  std::optional<uint64_t> size = U64();
  if (!size.has_value()) return std::nullopt;
  return Take(*size);
}

}  // namespace aos::logging::mcap
