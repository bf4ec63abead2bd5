#include "aos/events/logging/hostile_log.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "aos/events/logging/mcap_records.h"
#include "glog/logging.h"

namespace aos::logging::testing {

using mcap::Opcode;
using mcap::RecordEncoder;

std::string MessageRecord(uint16_t channel, uint32_t sequence,
                          uint64_t log_time, uint64_t publish_time,
                          std::string_view data) {
  std::string out;
  RecordEncoder record(&out, Opcode::kMessage);
  record.U16(channel);
  record.U32(sequence);
  record.U64(log_time);
  record.U64(publish_time);
  record.Bytes(data);
  record.Finish();
  return out;
}

std::string UnknownRecordPrefix(uint64_t size) {
  std::string out(1, static_cast<char>(0x80));
  out.append(reinterpret_cast<const char*>(&size), sizeof(size));
  return out;
}

std::string ZstdChunkRecord(uint64_t start_time, uint64_t end_time,
                            const std::vector<ChunkPiece>& pieces) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  CHECK(context != nullptr);
  CHECK(!ZSTD_isError(
      ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 1)));
  std::string compressed;
  std::string buffer(ZSTD_CStreamOutSize(), '\0');
  const std::string zeros(1 << 20, '\0');
  uint64_t uncompressed = 0;
  const auto feed = [&](std::string_view input, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    while (true) {
      ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
      const size_t left = ZSTD_compressStream2(context, &out, &in, mode);
      CHECK(!ZSTD_isError(left)) << ZSTD_getErrorName(left);
      compressed.append(buffer.data(), out.pos);
      const bool done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
      if (done) break;
    }
    uncompressed += input.size();
  };
  for (const ChunkPiece& piece : pieces) {
    feed(piece.bytes, ZSTD_e_continue);
    for (uint64_t left = piece.zeros; left > 0;) {
      const uint64_t step = std::min<uint64_t>(left, zeros.size());
      feed(std::string_view(zeros.data(), step), ZSTD_e_continue);
      left -= step;
    }
  }
  feed({}, ZSTD_e_end);
  ZSTD_freeCCtx(context);
  return ChunkRecord(start_time, end_time, uncompressed, "zstd", compressed);
}

std::string ChunkRecord(uint64_t start_time, uint64_t end_time,
                        uint64_t uncompressed_size,
                        std::string_view compression,
                        std::string_view compressed) {
  std::string out;
  RecordEncoder record(&out, Opcode::kChunk);
  record.U64(start_time);
  record.U64(end_time);
  record.U64(uncompressed_size);
  record.U32(0);
  record.String(compression);
  record.U64(compressed.size());
  record.Bytes(compressed);
  record.Finish();
  return out;
}

std::string AttachmentRecord(std::string_view name, std::string_view data,
                             uint32_t crc) {
  std::string out;
  RecordEncoder record(&out, Opcode::kAttachment);
  record.U64(0);
  record.U64(0);
  record.String(name);
  record.String("application/octet-stream");
  record.U64(data.size());
  record.Bytes(data);
  record.U32(crc);
  record.Finish();
  return out;
}

std::string DataSection(std::string_view log) {
  uint64_t offset = mcap::kMagic.size();
  while (log.size() - offset >= mcap::kRecordPrefixSize) {
    uint64_t length;
    std::memcpy(&length, log.data() + offset + 1, sizeof(length));
    if (static_cast<uint8_t>(log[offset]) ==
            static_cast<uint8_t>(Opcode::kDataEnd) ||
        length > log.size() - offset - mcap::kRecordPrefixSize) {
      break;
    }
    offset += mcap::kRecordPrefixSize + length;
  }
  return std::string(log.substr(0, offset));
}

namespace {

// Data End, then (from `summary`) the summary, Footer and magic.
std::string End(uint64_t data_size, std::string_view summary) {
  std::string out;
  {
    RecordEncoder data_end(&out, Opcode::kDataEnd);
    data_end.U32(0);
    data_end.Finish();
  }
  const uint64_t summary_start = summary.empty() ? 0 : data_size + out.size();
  out += summary;
  RecordEncoder footer(&out, Opcode::kFooter);
  footer.U64(summary_start);
  footer.U64(0);
  footer.U32(0);
  footer.Finish();
  out += mcap::kMagic;
  return out;
}

}  // namespace

std::string EndWithoutSummary() { return End(0, ""); }

std::string EndWithSummary(uint64_t data_size,
                           const std::vector<uint64_t>& chunk_offsets,
                           const std::vector<uint64_t>& attachment_offsets) {
  std::string summary;
  for (const uint64_t offset : chunk_offsets) {
    RecordEncoder index(&summary, Opcode::kChunkIndex);
    index.U64(0);
    index.U64(UINT64_MAX);
    index.U64(offset);
    index.Finish();
  }
  for (const uint64_t offset : attachment_offsets) {
    RecordEncoder index(&summary, Opcode::kAttachmentIndex);
    index.U64(offset);
    index.Finish();
  }
  return End(data_size, summary);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CHECK(in) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteWholeFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
  CHECK(out) << path;
}

}  // namespace aos::logging::testing
