#ifndef AOS_FLATBUFFERS_H_
#define AOS_FLATBUFFERS_H_

// Owning holders for finished flatbuffers.
//
//   aos::FlatbufferDetachedBuffer<aos::Configuration> config = ...;
//   for (const aos::Channel *channel : *config.message().channels()) ...
//
// A FlatbufferDetachedBuffer<T> owns the bytes of one finished flatbuffer
// whose root is a T, and hands out the typed root. It is move-only: copying a
// configuration or message is always explicit (CopyFlatbuffer()).

#include <cstdint>
#include <span>
#include <utility>

#include "flatbuffers/flatbuffers.h"

namespace aos {

template <typename T>
class FlatbufferDetachedBuffer {
 public:
  // Takes ownership of a finished buffer whose root table is a T. The caller
  // promises the root type; nothing here checks it (verify untrusted bytes
  // with flatbuffers::Verifier before wrapping them).
  explicit FlatbufferDetachedBuffer(flatbuffers::DetachedBuffer&& buffer)
      : buffer_(std::move(buffer)) {}

  FlatbufferDetachedBuffer(FlatbufferDetachedBuffer&&) = default;
  FlatbufferDetachedBuffer& operator=(FlatbufferDetachedBuffer&&) = default;
  FlatbufferDetachedBuffer(const FlatbufferDetachedBuffer&) = delete;
  FlatbufferDetachedBuffer& operator=(const FlatbufferDetachedBuffer&) = delete;

  // The root table. Valid as long as this object lives and is not moved from.
  const T& message() const { return *flatbuffers::GetRoot<T>(buffer_.data()); }

  // The serialized bytes.
  std::span<const uint8_t> span() const {
    return {buffer_.data(), buffer_.size()};
  }

 private:
  flatbuffers::DetachedBuffer buffer_;
};

}  // namespace aos

#endif  // AOS_FLATBUFFERS_H_
