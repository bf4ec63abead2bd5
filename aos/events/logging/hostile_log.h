#ifndef AOS_EVENTS_LOGGING_HOSTILE_LOG_H_
#define AOS_EVENTS_LOGGING_HOSTILE_LOG_H_

// For tests: the pieces of MCAP files a hostile writer could hand a reader,
// built record by record (mcap_records.h), so that decompression bombs,
// chunks indexed many times or strings full of escape sequences can be made
// at test time instead of kept in testdata.
//
//   std::string log = ReadWholeFile(path);           // a real aos log
//   std::string bytes = DataSection(log);            // up to its Data End
//   bytes += ZstdChunkRecord(t, t, {{MessageRecord(...), 1 << 30}});
//   bytes += EndWithoutSummary();                    // readers scan it

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aos::logging::testing {

// A Message record (opcode, length, fields, data).
std::string MessageRecord(uint16_t channel, uint32_t sequence,
                          uint64_t log_time, uint64_t publish_time,
                          std::string_view data);

// The 9-byte prefix of a record of an opcode MCAP does not use (0x80) whose
// content is `size` bytes; readers skip such records. Follow it with the
// content (e.g. ChunkPiece::zeros).
std::string UnknownRecordPrefix(uint64_t size);

// Part of a chunk's records: `bytes`, then `zeros` zero bytes.
struct ChunkPiece {
  std::string bytes;
  uint64_t zeros = 0;
};

// A Chunk record of `pieces` compressed with zstd, claiming the time range
// [start_time, end_time] and its true uncompressed size, with no CRC (0:
// unchecked). Compresses in a stream: a chunk of gigabytes of zeros is built
// in a fraction of a second without a buffer of its size.
std::string ZstdChunkRecord(uint64_t start_time, uint64_t end_time,
                            const std::vector<ChunkPiece>& pieces);

// A Chunk record with every field as given (nothing is checked): the
// compression's name, the size it claims, and the compressed bytes.
std::string ChunkRecord(uint64_t start_time, uint64_t end_time,
                        uint64_t uncompressed_size,
                        std::string_view compression,
                        std::string_view compressed);

// An Attachment record (its CRC as given: 0 is unchecked).
std::string AttachmentRecord(std::string_view name, std::string_view data,
                             uint32_t crc);

// The bytes of an MCAP file `log` up to its Data End record (or up to its
// end if it has none): magic, Header and the data section, to append
// records to.
std::string DataSection(std::string_view log);

// Data End, a Footer that says there is no summary, and the closing magic:
// readers scan the records before it.
std::string EndWithoutSummary();

// Data End, a summary section of one Chunk Index per entry of
// `chunk_offsets` (repeats allowed: each points at the Chunk record at that
// offset of the file) and one Attachment Index per entry of
// `attachment_offsets`, a Footer pointing at it, and the closing magic.
// `data_size` is the size of the file before these bytes. The summary has
// no Schema or Channel records and no CRC.
std::string EndWithSummary(uint64_t data_size,
                           const std::vector<uint64_t>& chunk_offsets,
                           const std::vector<uint64_t>& attachment_offsets);

std::string ReadWholeFile(const std::string& path);
void WriteWholeFile(const std::string& path, std::string_view bytes);

}  // namespace aos::logging::testing

#endif  // AOS_EVENTS_LOGGING_HOSTILE_LOG_H_
