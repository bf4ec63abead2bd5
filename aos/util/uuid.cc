#include "aos/util/uuid.h"

#include <sys/random.h>

#include <cstring>
#include <fstream>

#include "aos/util/str_cat.h"

namespace aos {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

UUID UUID::Random() {
  UUID uuid;
  size_t filled = 0;
  while (filled < uuid.bytes_.size()) {
    const ssize_t n =
        getrandom(uuid.bytes_.data() + filled, uuid.bytes_.size() - filled, 0);
    if (n > 0) filled += static_cast<size_t>(n);
  }
  uuid.bytes_[6] = (uuid.bytes_[6] & 0x0f) | 0x40;  // Version 4.
  uuid.bytes_[8] = (uuid.bytes_[8] & 0x3f) | 0x80;  // RFC 4122 variant.
  return uuid;
}

absl::StatusOr<UUID> UUID::BootUuidFrom(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) {
    return absl::NotFoundError(StrCat(path, ": cannot read a boot UUID"));
  }
  absl::StatusOr<UUID> parsed = Parse(line);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        StrCat(path, ": ", parsed.status().message()));
  }
  return parsed;
}

UUID UUID::BootUuid() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string line;
  if (std::getline(in, line)) {
    if (absl::StatusOr<UUID> parsed = Parse(line); parsed.ok()) return *parsed;
  }
  static const UUID kProcessBoot = Random();
  return kProcessBoot;
}

absl::StatusOr<UUID> UUID::Parse(std::string_view text) {
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' ||
      text[18] != '-' || text[23] != '-') {
    return absl::InvalidArgumentError(
        StrCat("\"", text,
               "\" is not a UUID like "
               "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"));
  }
  UUID uuid;
  size_t byte = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '-') continue;
    const int high = HexDigit(text[i]);
    const int low = i + 1 < text.size() ? HexDigit(text[i + 1]) : -1;
    if (high < 0 || low < 0) {
      return absl::InvalidArgumentError(
          StrCat("\"", text, "\" is not a UUID: bad hex digit"));
    }
    uuid.bytes_[byte++] = static_cast<uint8_t>(high * 16 + low);
    ++i;
  }
  return uuid;
}

UUID UUID::FromBytes(const uint8_t* bytes) {
  UUID uuid;
  memcpy(uuid.bytes_.data(), bytes, uuid.bytes_.size());
  return uuid;
}

std::string UUID::ToString() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < bytes_.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kHex[bytes_[i] >> 4];
    text += kHex[bytes_[i] & 0xf];
  }
  return text;
}

bool UUID::IsZero() const {
  for (uint8_t byte : bytes_) {
    if (byte != 0) return false;
  }
  return true;
}

}  // namespace aos
