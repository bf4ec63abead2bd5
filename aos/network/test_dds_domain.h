#ifndef AOS_NETWORK_TEST_DDS_DOMAIN_H_
#define AOS_NETWORK_TEST_DDS_DOMAIN_H_

// For tests: the DDS domain a test binary's participants and bridges use on
// loopback. Each binary has a range of its own, picked in by pid, so that
// tests running at once do not hear each other; every domain is at most
// 101, so that DDS's ports (7400 + 250 x domain) stay below Linux's
// ephemeral ports (32768 and up), which any program may happen to hold.
//
//   const uint32_t domain = TestDdsDomain(DdsTestBinary::kMessageBridge);

#include <unistd.h>

#include <cstdint>

namespace aos::message_bridge {

enum class DdsTestBinary {
  kDdsParticipant,         // dds_participant_test: 1-30
  kMessageBridge,          // message_bridge_test: 31-55
  kMultinodeEndToEnd,      // multinode_pingpong_e2e_test: 66-100
  kMessageBridgeSecurity,  // message_bridge_security_test: 56-65
};

// This process's domain in `binary`'s range.
inline uint32_t TestDdsDomain(DdsTestBinary binary) {
  struct Range {
    uint32_t first;
    uint32_t size;
  };
  constexpr Range kRanges[] = {{1, 30}, {31, 25}, {66, 35}, {56, 10}};
  const Range range = kRanges[static_cast<int>(binary)];
  return range.first + static_cast<uint32_t>(getpid()) % range.size;
}

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_TEST_DDS_DOMAIN_H_
