#include "aos/events/logging/chunk_compression.h"

#include <lz4frame.h>
#include <zstd.h>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::logging {
namespace {

// Fast settings: the logger must keep up with the whole system on one core.
constexpr int kZstdLevel = 1;

}  // namespace

struct ChunkCompressor::Contexts {
  ZSTD_CCtx* zstd = nullptr;
  ~Contexts() { ZSTD_freeCCtx(zstd); }
};

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone:
      return "";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  LOG(FATAL) << "unknown Compression " << static_cast<int>(compression);
}

std::optional<Compression> ParseCompression(std::string_view name) {
  if (name == "none") return Compression::kNone;
  if (name == "lz4") return Compression::kLz4;
  if (name == "zstd") return Compression::kZstd;
  return std::nullopt;
}

ChunkCompressor::ChunkCompressor(Compression compression)
    : compression_(compression), contexts_(std::make_unique<Contexts>()) {
  if (compression_ == Compression::kZstd) {
    contexts_->zstd = ZSTD_createCCtx();
    CHECK(contexts_->zstd != nullptr) << "ZSTD_createCCtx failed";
  }
}

ChunkCompressor::~ChunkCompressor() = default;

void ChunkCompressor::Reserve(size_t max_input_size) {
  size_t bound = 0;
  switch (compression_) {
    case Compression::kNone:
      return;
    case Compression::kLz4:
      bound = LZ4F_compressFrameBound(max_input_size, nullptr);
      break;
    case Compression::kZstd:
      bound = ZSTD_compressBound(max_input_size);
      break;
  }
  if (output_.size() < bound) output_.resize(bound);
}

std::string_view ChunkCompressor::Compress(std::string_view input) {
  if (compression_ == Compression::kNone) return input;
  Reserve(input.size());
  size_t size = 0;
  if (compression_ == Compression::kZstd) {
    size = ZSTD_compressCCtx(contexts_->zstd, output_.data(), output_.size(),
                             input.data(), input.size(), kZstdLevel);
    CHECK(!ZSTD_isError(size))
        << "ZSTD_compressCCtx: " << ZSTD_getErrorName(size);
  } else {
    size = LZ4F_compressFrame(output_.data(), output_.size(), input.data(),
                              input.size(), nullptr);
    CHECK(!LZ4F_isError(size))
        << "LZ4F_compressFrame: " << LZ4F_getErrorName(size);
  }
  return std::string_view(output_.data(), size);
}

namespace {

absl::Status DecompressLz4(std::string_view input, std::string* output) {
  LZ4F_dctx* context = nullptr;
  size_t result = LZ4F_createDecompressionContext(&context, LZ4F_VERSION);
  if (LZ4F_isError(result)) {
    return absl::InternalError(StrCat("lz4: ", LZ4F_getErrorName(result)));
  }
  size_t in_offset = 0;
  size_t out_offset = 0;
  absl::Status status;
  while (true) {
    size_t in_size = input.size() - in_offset;
    size_t out_size = output->size() - out_offset;
    result = LZ4F_decompress(context, output->data() + out_offset, &out_size,
                             input.data() + in_offset, &in_size, nullptr);
    if (LZ4F_isError(result)) {
      status = absl::DataLossError(
          StrCat("lz4 data is corrupt: ", LZ4F_getErrorName(result)));
      break;
    }
    in_offset += in_size;
    out_offset += out_size;
    if (result == 0) break;  // The frame is complete.
    if (in_size == 0 && out_size == 0) {
      status = absl::DataLossError(
          out_offset == output->size()
              ? "lz4 data decompresses to more than the chunk's size"
              : "lz4 data ends inside its frame");
      break;
    }
  }
  LZ4F_freeDecompressionContext(context);
  if (status.ok() && out_offset != output->size()) {
    status =
        absl::DataLossError(StrCat("lz4 data decompresses to ", out_offset,
                                   " bytes, not the chunk's ", output->size()));
  }
  return status;
}

}  // namespace

std::optional<uint64_t> MaxDecompressedSize(std::string_view name,
                                            uint64_t compressed_size) {
  // Saturates rather than wrapping: a size near 2^64 cannot be in a file.
  const auto times = [&](uint64_t factor, uint64_t slack) {
    return compressed_size > (UINT64_MAX - slack) / factor
               ? UINT64_MAX
               : compressed_size * factor + slack;
  };
  if (name.empty()) return compressed_size;
  if (name == "lz4") return times(256, 64);
  if (name == "zstd") return times(32768, 0);
  return std::nullopt;
}

absl::Status DecompressChunk(std::string_view name, std::string_view input,
                             uint64_t uncompressed_size, std::string* output) {
  if (!MaxDecompressedSize(name, input.size()).has_value()) {
    return absl::UnimplementedError(
        StrCat("unknown chunk compression ", Printable(name),
               " (this reader knows \"\", \"lz4\" and \"zstd\")"));
  }
  if (name.empty()) {
    if (input.size() != uncompressed_size) {
      return absl::DataLossError(StrCat("uncompressed chunk holds ",
                                        input.size(), " bytes, not ",
                                        uncompressed_size));
    }
    output->assign(input);
    return absl::OkStatus();
  }
  output->resize(uncompressed_size);
  if (name == "zstd") {
    const size_t size = ZSTD_decompress(output->data(), output->size(),
                                        input.data(), input.size());
    if (ZSTD_isError(size)) {
      return absl::DataLossError(
          StrCat("zstd data is corrupt: ", ZSTD_getErrorName(size)));
    }
    if (size != uncompressed_size) {
      return absl::DataLossError(StrCat("zstd data decompresses to ", size,
                                        " bytes, not the chunk's ",
                                        uncompressed_size));
    }
    return absl::OkStatus();
  }
  return DecompressLz4(input, output);
}

}  // namespace aos::logging
