// message_bridge: forwards a node's channels to the other nodes and theirs
// to it, as the configuration says, over Cyclone DDS. One per node.
// docs/network.md.
#include <cstdint>
#include <iostream>
#include <optional>

#include "aos/config_flag.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/init.h"
#include "aos/network/dds_participant.h"
#include "aos/network/message_bridge.h"
#include "aos/node_flag.h"
#include "aos/util/keep_freed_heap.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_uint32(dds_domain, 0,
              "The DDS domain (0-230): bridges talk only to bridges of the "
              "same domain.");
DEFINE_string(dds_interface, "",
              "The network interface DDS uses, by name (lo, eth0, veth1) or "
              "address; empty lets Cyclone DDS choose.");
DEFINE_string(dds_security, "",
              "DDS Security: a directory as tools/dds_security/"
              "make_test_ca.sh makes it (identity_ca.pem, permissions_ca.pem, "
              "governance.p7s, and <node>/identity.pem, identity_key.pem, "
              "permissions.p7s). The bridge then authenticates, and hears "
              "only bridges the same CAs admitted; empty: no security, "
              "anyone on the network is heard.");
DEFINE_string(dds_security_plugins, "",
              "With --dds_security: the directory of Cyclone DDS's security "
              "plugins (libdds_security_{auth,ac,crypto}.so); empty: Debian's, "
              "libddsc0debian beside libddsc.");

namespace aos::message_bridge {
namespace {

int Main() {
  // A bridge forwards what a system's config says: no example stands in.
  if (FLAGS_config.empty()) {
    ExitForUserError(
        "--config is required: your system's multi-node configuration (for "
        "the example, --config=bazel-bin/examples/"
        "multinode_pingpong_config.json)");
  }
  auto config = ReadConfigFlag("");
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  const Configuration& configuration = config.value().message();
  if (!configuration::MultiNode(configuration)) {
    ExitForUserError(
        "--config: the configuration has no nodes, so there is "
        "nothing to forward");
  }
  auto node = ReadNodeFlag(configuration);
  if (!node.ok()) ExitForUserError(std::string(node.status().message()));
  ShmEventLoop loop(&configuration, "message_bridge", *node);
  MessageBridge::Options options;
  options.dds.domain = FLAGS_dds_domain;
  options.dds.interface = FLAGS_dds_interface;
  const std::string node_name(StringView((*node)->name()));
  if (!FLAGS_dds_security.empty()) {
    DdsSecurityFiles files = DdsSecurityFiles::InDirectory(
        FLAGS_dds_security, node_name,
        StrCat("--dds_security=", FLAGS_dds_security));
    if (!FLAGS_dds_security_plugins.empty()) {
      files.plugin_dir = FLAGS_dds_security_plugins;
      files.plugin_source =
          StrCat("--dds_security_plugins=", FLAGS_dds_security_plugins);
    }
    options.dds.security = std::move(files);
  } else if (!FLAGS_dds_security_plugins.empty()) {
    ExitForUserError(
        "--dds_security_plugins is given without --dds_security: give the "
        "directory of the certificates too, or neither");
  }
  auto bridge = MessageBridge::Make(&loop, options);
  if (!bridge.ok()) ExitForUserError(std::string(bridge.status().message()));
  // Whether peers are authenticated is the first thing to know about a
  // bridge: said once, at start.
  if ((*bridge)->security().has_value()) {
    std::cerr << program_invocation_short_name << ": " << node_name
              << ": DDS Security on: " << (*bridge)->security()->Describe()
              << std::endl;
  } else {
    std::cerr << program_invocation_short_name << ": " << node_name
              << ": DDS Security off: peers are not authenticated, anyone "
                 "who reaches this network can send as any node "
                 "(--dds_security; docs/network.md)"
              << std::endl;
  }
  // A kernel that grants less than the bridge asks for its sockets makes a
  // burst of arrivals overflow sooner: said once, at start, with the fix.
  if (const std::optional<int64_t> granted =
          DdsParticipant::GrantedSocketReceiveBufferBytes();
      granted.has_value() &&
      *granted < DdsParticipant::kSocketReceiveBufferBytes) {
    std::cerr << program_invocation_short_name << ": " << node_name
              << ": UDP receive buffers get " << *granted / 1024 << " KiB of "
              << DdsParticipant::kSocketReceiveBufferBytes / 1024
              << " KiB asked (net.core.rmem_max): a burst that Cyclone's "
                 "receive thread falls behind loses datagrams sooner, and "
                 "reliable channels send them again; raise it with sysctl -w "
                 "net.core.rmem_max="
              << DdsParticipant::kSocketReceiveBufferBytes
              << " (docs/network.md, \"UDP receive buffers\")" << std::endl;
  }
  // Cyclone's histories grow and shrink with the traffic; heap given back
  // to the OS between floods is faulted in again at the next, and on a VM
  // those faults held the loop back past the queue at 150 k messages/s
  // (docs/benchmarks.md, "Freed heap kept").
  // (A sanitizer's malloc ignores it: nothing to say.)
  KeepFreedHeap();
  loop.Run();
  return 0;
}

}  // namespace
}  // namespace aos::message_bridge

int main(int argc, char** argv) {
  // The bridge hands every message to Cyclone DDS, which allocates: its
  // callbacks may not run under --die_on_malloc's guard.
  gflags::SetCommandLineOptionWithMode("die_on_malloc", "false",
                                       gflags::SET_FLAGS_DEFAULT);
  aos::InitGoogle(
      &argc, &argv,
      "Usage: message_bridge --config=FILE [--node=NAME] [--dds_domain=N]\n"
      "    [--dds_interface=NAME] [--dds_security=DIR] [--shm_base=DIR]\n"
      "Forwards this node's channels that have destination_nodes to those\n"
      "nodes, and re-sends theirs here, over Cyclone DDS; publishes\n"
      "ServerStatistics and ClientStatistics on /aos every second. One per\n"
      "node; stop with Ctrl-C or SIGTERM. --config is required. With\n"
      "--dds_security, only peers the\n"
      "same CAs admitted are heard (DDS Security; its governance document\n"
      "says what is encrypted); without, anyone on the network can send as\n"
      "any node. docs/network.md.");
  aos::RefuseArguments(argc, argv);
  return aos::message_bridge::Main();
}
