#ifndef AOS_NETWORK_TEST_DDS_DOMAIN_H_
#define AOS_NETWORK_TEST_DDS_DOMAIN_H_

// For tests: the DDS domain a test binary's participants and bridges use on
// loopback. Each binary has a range of its own, and a process claims a
// domain of it with a lock file (/tmp/aos_test_dds_domain_N.lock) held for
// its lifetime, starting at one picked by pid: tests running at once (other
// binaries, or `--runs_per_test` copies of one) never share a domain while
// the range lasts, and then share by pid. Every domain is at most
// 101, so that DDS's ports (7400 + 250 x domain) stay below Linux's
// ephemeral ports (32768 and up), which any program may happen to hold.
//
//   const uint32_t domain = TestDdsDomain(DdsTestBinary::kMessageBridge);

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <string>

#include "aos/util/scoped_fd.h"

namespace aos::message_bridge {

enum class DdsTestBinary {
  kDdsParticipant,         // dds_participant_test: 1-30
  kMessageBridge,          // message_bridge_test: 31-50
  kMultinodeEndToEnd,      // multinode_pingpong_e2e_test: 66-100
  kMessageBridgeSecurity,  // message_bridge_security_test: 56-65
  kBridgeReceiveThread,    // bridge_receive_thread_test: 51-55
};

// This process's domain in `binary`'s range: the same on every call.
inline uint32_t TestDdsDomain(DdsTestBinary binary) {
  struct Range {
    uint32_t first;
    uint32_t size;
  };
  constexpr Range kRanges[] = {{1, 30}, {31, 20}, {66, 35}, {56, 10}, {51, 5}};
  static uint32_t claimed[std::size(kRanges)] = {};
  const int which = static_cast<int>(binary);
  if (claimed[which] != 0) return claimed[which];
  const Range range = kRanges[which];
  const uint32_t start = static_cast<uint32_t>(getpid()) % range.size;
  claimed[which] = range.first + start;
  for (uint32_t i = 0; i < range.size; ++i) {
    const uint32_t domain = range.first + (start + i) % range.size;
    const std::string lock =
        "/tmp/aos_test_dds_domain_" + std::to_string(domain) + ".lock";
    ScopedFd fd(open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
    if (!fd.valid()) break;
    if (flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      // Held (the descriptor left open on purpose) until this process ends.
      [[maybe_unused]] const int held = fd.release();
      claimed[which] = domain;
      break;
    }
  }
  return claimed[which];
}

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_TEST_DDS_DOMAIN_H_
