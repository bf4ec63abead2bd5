// bridge_forger: a hostile DDS peer, for tests. Writes, in one node's name,
// well-formed aos_bridge_Messages on one channel's topic and probes with a
// new boot UUID each to another node's probe topic, every --period_ms,
// until SIGTERM or SIGINT; then prints on stdout
//   pings=N probes=N matched=true|false
// (matched: whether any reader ever matched its writers). With
// --dds_security it is a participant with those files (a certificate of
// some CA), without it a plain one. A process of its own: Cyclone DDS
// 0.10.2 crashes when a participant without security makes a topic in a
// domain where another participant of the same process loaded security.
// message_bridge_security_test runs it.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <random>
#include <thread>

#include "aos/init.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/dds_participant.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"
#include "gflags/gflags.h"

DEFINE_uint32(dds_domain, 0, "The DDS domain to forge in.");
DEFINE_string(dds_interface, "lo", "The network interface DDS uses.");
DEFINE_string(dds_security, "",
              "A directory as make_test_ca.sh makes it: be a secure "
              "participant with --security_node's files; empty: a plain one.");
DEFINE_string(security_node, "pi1",
              "Whose certificate of --dds_security to present.");
DEFINE_uint32(channel_index, 0, "The channel whose topic gets the messages.");
DEFINE_string(channel_name, "/test", "That channel's name (for the topic).");
DEFINE_string(channel_type, "aos.examples.Ping",
              "That channel's type (for the topic).");
DEFINE_uint32(from_node, 0, "The node index the forgeries claim to be from.");
DEFINE_uint32(to_node, 1, "The node index whose probe topic gets probes.");
DEFINE_int32(ping_value, -1,
             "The messages are aos.examples.Ping tables with this value.");
DEFINE_uint32(period_ms, 5, "Milliseconds between rounds of writes.");

namespace aos::message_bridge {
namespace {

std::atomic<bool> stop{false};

void OnSignal(int) { stop = true; }

int Main() {
  DdsParticipant::Options options{.domain = FLAGS_dds_domain,
                                  .interface = FLAGS_dds_interface};
  if (!FLAGS_dds_security.empty()) {
    options.security = DdsSecurityFiles::InDirectory(
        FLAGS_dds_security, FLAGS_security_node,
        StrCat("--dds_security=", FLAGS_dds_security));
  }
  auto dds = DdsParticipant::Make(options);
  if (!dds.ok()) ExitForUserError(std::string(dds.status().message()));
  std::cerr << "bridge_forger: writing in domain " << FLAGS_dds_domain
            << (FLAGS_dds_security.empty() ? " without security"
                                           : " with security")
            << std::endl;
  auto message_writer = (*dds)->MakeWriter(
      &aos_bridge_Message_desc,
      DdsParticipant::TopicName(FLAGS_channel_index, FLAGS_channel_name,
                                FLAGS_channel_type),
      {.reliable = true, .depth = 100, .lifespan_ns = 0});
  if (!message_writer.ok())
    ExitForUserError(std::string(message_writer.status().message()));
  // The bridge's probe topic of --to_node (message_bridge.cc, ProbeTopic).
  auto probe_writer = (*dds)->MakeWriter(
      &aos_bridge_Probe_desc, StrCat("aos_bridge_probe_", FLAGS_to_node),
      {.reliable = false, .depth = 4, .lifespan_ns = 0});
  if (!probe_writer.ok())
    ExitForUserError(std::string(probe_writer.status().message()));

  flatbuffers::FlatBufferBuilder fbb;
  examples::Ping::Builder ping(fbb);
  ping.add_value(FLAGS_ping_value);
  fbb.Finish(ping.Finish());
  std::mt19937_64 random(static_cast<uint64_t>(getpid()));
  uint64_t pings = 0, probes = 0;
  bool matched = false;
  // A parent's event loop may have left them blocked for us.
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigprocmask(SIG_UNBLOCK, &signals, nullptr);
  while (!stop) {
    uint8_t boot[16];
    for (uint8_t& byte : boot) byte = static_cast<uint8_t>(random());
    aos_bridge_Message message = {};
    message.channel_index = FLAGS_channel_index;
    message.source_node = FLAGS_from_node;
    message.queue_index = static_cast<uint32_t>(pings);
    message.monotonic_sent_ns = 1000;
    message.realtime_sent_ns = 2000;
    memcpy(message.boot_uuid, boot, 16);
    message.data._buffer = fbb.GetBufferPointer();
    message.data._length = fbb.GetSize();
    message.data._maximum = fbb.GetSize();
    if (dds_write(*message_writer, &message) == 0) ++pings;
    aos_bridge_Probe probe = {};
    probe.from_node = FLAGS_from_node;
    probe.to_node = FLAGS_to_node;
    memcpy(probe.boot_uuid, boot, 16);
    probe.monotonic_sent_ns = static_cast<int64_t>(1000 + probes);
    if (dds_write(*probe_writer, &probe) == 0) ++probes;
    for (dds_entity_t writer : {*message_writer, *probe_writer}) {
      dds_publication_matched_status_t status = {};
      if (dds_get_publication_matched_status(writer, &status) == 0 &&
          status.total_count > 0) {
        matched = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(FLAGS_period_ms));
  }
  std::cout << "pings=" << pings << " probes=" << probes
            << " matched=" << (matched ? "true" : "false") << std::endl;
  return 0;
}

}  // namespace
}  // namespace aos::message_bridge

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: bridge_forger --dds_domain=N [--dds_security=DIR]\n"
      "    [--channel_index=N] [--from_node=N] [--to_node=N] "
      "[--ping_value=N]\n"
      "A hostile DDS peer for tests: forged bridge messages and probes in\n"
      "a node's name until SIGTERM, then its counts on stdout.");
  aos::RefuseArguments(argc, argv);
  return aos::message_bridge::Main();
}
