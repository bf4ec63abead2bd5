#ifndef AOS_UTIL_UUID_H_
#define AOS_UTIL_UUID_H_

// A 128-bit UUID, as AOS uses one to name a boot of a node: every message
// carries the boot UUID of the node it was first sent on, so a receiver can
// tell a rebooted peer from a duplicate.
//
//   const UUID boot = UUID::BootUuid();     // this machine's current boot
//   std::cout << boot.ToString();           // "9f1c...-...."

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aos {

class UUID {
 public:
  // All zeros: no UUID known.
  constexpr UUID() = default;

  // A random (version 4) UUID from the kernel's random source.
  static UUID Random();
  // This machine's boot: /proc/sys/kernel/random/boot_id (changes every
  // boot). Falls back to one random UUID per process if it cannot be read.
  static UUID BootUuid();
  // The boot UUID in the file at `path` (as /proc/sys/kernel/random/boot_id
  // holds it), or an error naming the file.
  static absl::StatusOr<UUID> BootUuidFrom(const std::string& path);
  // Parses the 36-character form "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
  static absl::StatusOr<UUID> Parse(std::string_view text);
  // The 16 bytes as they are, e.g. from a message.
  static UUID FromBytes(const uint8_t* bytes);

  // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case.
  std::string ToString() const;
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  bool IsZero() const;

  bool operator==(const UUID&) const = default;
  auto operator<=>(const UUID&) const = default;

 private:
  std::array<uint8_t, 16> bytes_ = {};
};

}  // namespace aos

#endif  // AOS_UTIL_UUID_H_
