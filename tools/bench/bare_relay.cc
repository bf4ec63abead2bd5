// bare_relay: the least a bridge process can do, for the bridge bench's
// relay floor (tools/bench/bridge.sh, docs/benchmarks.md). One per node,
// in place of message_bridge: it forwards every channel named --channel
// that this node sends to another node, and re-sends here what the other
// node's relay forwards, on the same DDS topics and wire type as the
// message bridge. It does nothing else: no probes, clocks or connection
// state, no statistics, no remote timestamps, no path origins, no check of
// what arrives, no write batching. A message goes out from the loop's
// watcher in one dds_write and comes in, taken and re-sent, in Cyclone's
// receive thread (no hand-over to the loop). So the forwarded round trip
// through two relays is what the message bridge's hops cost with no work
// of the bridge's own: a floor under any bridge process built on these
// shared-memory channels and Cyclone DDS. Not a bridge to use: it trusts
// its peer, and stops at SIGINT or SIGTERM.
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/init.h"
#include "aos/network/bridge_topics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/dds_participant.h"
#include "aos/node_flag.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_uint32(dds_domain, 0, "The DDS domain (0-230) both relays use.");
DEFINE_string(dds_interface, "",
              "The network interface DDS uses, by name or address; empty "
              "lets Cyclone DDS choose.");
DEFINE_string(channel, "/test",
              "The channels (every type of that name) to relay.");

namespace aos::bench {
namespace {

using message_bridge::DdsParticipant;

// One channel that arrives here: its reader, sender and take buffer, used
// only in Cyclone's receive thread once the participant exists.
struct Incoming {
  Incoming()
      : arrived([this](dds_entity_t reader) {
          TakeAndResend(reader);
          return false;  // Nothing left for the loop.
        }) {}

  void TakeAndResend(dds_entity_t reader) {
    void* samples[1] = {&sample};
    dds_sample_info_t info;
    while (dds_take(reader, samples, &info, 1, 1) > 0) {
      if (info.valid_data) {
        // Larger than the channel allows (any participant of the domain
        // can send it): dropped, not sent.
        if (sample.data._length > max_size ||
            sender->Send(sample.data._buffer, sample.data._length) !=
                RawSender::Error::kOk) {
          ++failed_sends;
        }
      }
      // Cyclone replaces the buffer if a sample was larger than it.
      if (sample.data._buffer != buffer.get()) {
        if (sample.data._release) dds_free(sample.data._buffer);
        UseBuffer();
      }
    }
  }

  void UseBuffer() {
    sample.data._buffer = buffer.get();
    sample.data._maximum = buffer_size;
    sample.data._length = 0;
    sample.data._release = false;
  }

  DdsParticipant::Signal arrived;
  std::unique_ptr<RawSender> sender;
  std::unique_ptr<uint8_t[]> buffer;
  uint32_t buffer_size = 0;
  // The channel's max_size.
  uint32_t max_size = 0;
  aos_bridge_Message sample = {};
  // Samples not re-sent: larger than max_size, or refused by the channel
  // (sent too fast). Said at exit.
  int64_t failed_sends = 0;
};

int Main() {
  if (FLAGS_config.empty()) {
    ExitForUserError("--config is required: the multi-node configuration");
  }
  auto config = ReadConfigFlag("");
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  const Configuration& configuration = config.value().message();
  auto node = ReadNodeFlag(configuration);
  if (!node.ok()) ExitForUserError(std::string(node.status().message()));
  const std::string_view node_name = StringView((*node)->name());

  ShmEventLoop loop(&configuration, "bare_relay", *node);
  // Its senders are used in Cyclone's receive thread; it never runs, so
  // nothing else touches them.
  ShmEventLoop resend_loop(&configuration, "bare_relay_resend", *node);
  // Declared before the participant: the listeners use them until it is
  // deleted.
  std::vector<std::unique_ptr<Incoming>> incoming;
  // Raised when the other node's reader of what this node sends matched:
  // said on stderr once, for the bench to start pinging.
  DdsParticipant::Signal matched;
  // What to relay, checked before DDS is touched: a flag error costs no
  // participant.
  struct Relayed {
    const Channel* channel;
    uint32_t index;
    bool outgoing;
  };
  std::vector<Relayed> relayed;
  for (uint32_t index = 0; index < configuration.channels()->size(); ++index) {
    const Channel* channel = configuration.channels()->Get(index);
    if (StringView(channel->name()) != FLAGS_channel ||
        channel->destination_nodes() == nullptr ||
        channel->destination_nodes()->size() == 0) {
      continue;
    }
    if (channel->source_node() != nullptr &&
        StringView(channel->source_node()) == node_name) {
      relayed.push_back({channel, index, true});
      continue;
    }
    for (const Connection* connection : *channel->destination_nodes()) {
      if (StringView(connection->name()) == node_name) {
        relayed.push_back({channel, index, false});
        break;
      }
    }
  }
  if (relayed.empty()) {
    ExitForUserError(StrCat("--channel=", FLAGS_channel,
                            ": no channel of that name is forwarded to or "
                            "from node ",
                            node_name, " in --config"));
  }

  auto dds = DdsParticipant::Make(
      {.domain = FLAGS_dds_domain, .interface = FLAGS_dds_interface});
  if (!dds.ok()) ExitForUserError(std::string(dds.status().message()));
  for (const Relayed& r : relayed) {
    const message_bridge::ForwardedTopic topic =
        message_bridge::ForwardedChannelTopic(configuration, *r.channel,
                                              r.index);
    if (r.outgoing) {
      absl::StatusOr<dds_entity_t> writer = (*dds)->MakeWriter(
          &aos_bridge_Message_desc, topic.name, topic.qos, &matched);
      if (!writer.ok()) {
        ExitForUserError(std::string(writer.status().message()));
      }
      loop.MakeRawWatcher(r.channel, [writer = *writer, index = r.index](
                                         const Context& context,
                                         const void* data) {
        aos_bridge_Message message = {};
        message.channel_index = index;
        message.queue_index = context.queue_index;
        message.data._maximum = static_cast<uint32_t>(context.size);
        message.data._length = static_cast<uint32_t>(context.size);
        message.data._buffer = static_cast<uint8_t*>(const_cast<void*>(data));
        message.data._release = false;
        dds_write(writer, &message);
      });
      continue;
    }
    auto in = std::make_unique<Incoming>();
    in->max_size = static_cast<uint32_t>(r.channel->max_size());
    in->buffer_size = in->max_size + 1;
    in->buffer = std::make_unique<uint8_t[]>(in->buffer_size);
    in->UseBuffer();
    in->sender = resend_loop.MakeRawSender(r.channel);
    Incoming* raw = in.get();
    incoming.push_back(std::move(in));
    absl::StatusOr<dds_entity_t> reader = (*dds)->MakeReader(
        &aos_bridge_Message_desc, topic.name, topic.qos, &raw->arrived);
    if (!reader.ok()) ExitForUserError(std::string(reader.status().message()));
  }
  std::cerr << "bare_relay: " << node_name << ": relaying " << relayed.size()
            << " channels named " << FLAGS_channel << std::endl;
  bool said_matched = false;
  loop.OnReadable((*dds)->wakeup_fd(), [&]() {
    (*dds)->ClearWakeup();
    if (matched.Take() && !said_matched) {
      said_matched = true;
      std::cerr << "bare_relay: " << node_name << ": the other node's reader "
                << "matched" << std::endl;
    }
  });
  loop.Run();
  loop.StopReadable((*dds)->wakeup_fd());
  // The participant goes first: no listener runs once it is deleted.
  dds->reset();
  for (const std::unique_ptr<Incoming>& in : incoming) {
    if (in->failed_sends > 0) {
      std::cerr << "bare_relay: " << node_name << ": " << in->failed_sends
                << " samples not re-sent (too large, or refused)" << std::endl;
    }
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  // Cyclone DDS allocates for every sample it sends.
  gflags::SetCommandLineOptionWithMode("die_on_malloc", "false",
                                       gflags::SET_FLAGS_DEFAULT);
  aos::InitGoogle(
      &argc, &argv,
      "Usage: bare_relay --config=FILE --node=NAME [--channel=/test]\n"
      "    [--dds_domain=N] [--dds_interface=NAME] [--shm_base=DIR]\n"
      "The bridge bench's relay floor: forwards --channel between two\n"
      "nodes over Cyclone DDS with nothing of the message bridge's own\n"
      "work (no statistics, clocks, timestamps or checks). For\n"
      "measurement only: it trusts its peer. docs/benchmarks.md.");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
