#ifndef AOS_EVENTS_LOGGING_CHUNK_COMPRESSION_H_
#define AOS_EVENTS_LOGGING_CHUNK_COMPRESSION_H_

// Compressing and decompressing MCAP chunks: "zstd" (Zstandard frames),
// "lz4" (LZ4 frames) or "" (none), as the MCAP specification names them.
//
//   ChunkCompressor compressor(Compression::kZstd);
//   compressor.Reserve(1 << 20);  // before the realtime part: no allocation
//   std::string_view packed = compressor.Compress(records);
//
//   absl::Status status = DecompressChunk("zstd", packed, size, &records);

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace aos::logging {

enum class Compression { kNone, kLz4, kZstd };

// The MCAP name: "", "lz4", "zstd".
std::string_view CompressionName(Compression compression);
// From a flag value: "none", "lz4" or "zstd"; nullopt for anything else.
std::optional<Compression> ParseCompression(std::string_view name);

// Compresses chunks one at a time into a buffer it keeps. Not thread-safe.
class ChunkCompressor {
 public:
  explicit ChunkCompressor(Compression compression);
  ~ChunkCompressor();

  Compression compression() const { return compression_; }

  // Grows the output buffer for inputs up to `max_input_size` bytes, so
  // Compress() of such inputs allocates nothing.
  void Reserve(size_t max_input_size);

  // `input`, compressed. The result is valid until the next call; for
  // Compression::kNone it is `input` itself. Compression of memory cannot
  // fail; a library error is our bug and aborts with its message.
  std::string_view Compress(std::string_view input);

 private:
  struct Contexts;

  const Compression compression_;
  std::unique_ptr<Contexts> contexts_;
  std::string output_;
};

// The most bytes `compressed_size` bytes of MCAP compression `name` can
// decompress to, whatever they hold: "" is stored as is; an LZ4 frame
// expands at most about 255-fold (a match's length grows by 255 per byte);
// a Zstandard frame at most 32768-fold (an RLE block: 4 bytes for 128 KiB,
// the largest block). nullopt for a compression this reader does not know.
// A chunk claiming more is damaged or hostile: refuse it before allocating.
std::optional<uint64_t> MaxDecompressedSize(std::string_view name,
                                            uint64_t compressed_size);

// Decompresses a chunk's records compressed with MCAP compression `name`
// into `output` (resized to `uncompressed_size`). Errors: an unknown
// compression, corrupt data, or a size other than `uncompressed_size`; the
// message says which (the caller adds the file and offset), with the name
// escaped and bounded (aos::Printable). Allocates `uncompressed_size` bytes:
// bound it first (MaxDecompressedSize and the reader's own limits).
absl::Status DecompressChunk(std::string_view name, std::string_view input,
                             uint64_t uncompressed_size, std::string* output);

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_CHUNK_COMPRESSION_H_
