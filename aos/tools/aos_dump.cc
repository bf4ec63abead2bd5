// aos_dump: prints the messages of a channel as JSON, using the schema the
// configuration embeds (aos_config puts one in every channel).
#include <iostream>
#include <optional>
#include <set>

#include "aos/config_flag.h"
#include "aos/configuration_lookup.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_memory_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/node_flag.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "flatbuffers/reflection.h"

DEFINE_bool(fetch, false, "Print the latest message first, if there is one.");
DEFINE_int64(count, 0, "Stop after printing this many messages (0: never).");
DEFINE_int32(max_vector_size, 100,
             "Print longer vectors as \"[ ... N elements ... ]\".");
DEFINE_string(log, "",
              "Print the channel's messages from this log (an MCAP file "
              "aos_logger wrote) instead of live ones, then exit; the log's "
              "own configuration is used.");

namespace aos {
namespace {

// "/name type" of `channel` for a message: names from a config (a log's may
// be forged) are escaped and bounded.
std::string Describe(const Channel& channel) {
  return StrCat(InlinePrintable(channel.name()->string_view()), " ",
                InlinePrintable(channel.type()->string_view()));
}

// At most this many channels are listed in a message.
constexpr size_t kMaxListedChannels = 50;

// `described`, comma separated, at most kMaxListedChannels of them.
std::string ListSome(const std::vector<std::string>& described) {
  if (described.size() <= kMaxListedChannels) return StrJoin(described, ", ");
  return StrCat(
      StrJoin(std::vector<std::string>(described.begin(),
                                       described.begin() + kMaxListedChannels),
              ", "),
      " and ", described.size() - kMaxListedChannels, " more");
}

// The channels named `name` (and of `type`, if given), or an error listing
// the channels with that name or that type.
absl::StatusOr<const Channel*> FindDumpChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type) {
  std::vector<const Channel*> matches;
  std::vector<std::string> same_name;
  std::vector<std::string> same_type;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      const bool name_matches = channel->name()->string_view() == name;
      const bool type_matches = channel->type()->string_view() == type;
      if (name_matches) same_name.push_back(Describe(*channel));
      if (type_matches) same_type.push_back(Describe(*channel));
      if (name_matches && (type.empty() || type_matches))
        matches.push_back(channel);
    }
  }
  if (matches.size() == 1) return matches[0];
  const std::string shown_name = InlinePrintable(name);
  const std::string shown_type = InlinePrintable(type);
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(
        StrCat("several channels are named ", shown_name,
               "; add the type: ", ListSome(same_name)));
  }
  std::string message =
      StrCat("no channel ", shown_name, type.empty() ? "" : " of type ",
             type.empty() ? "" : shown_type, " in the config");
  StrAppend(&message,
            same_name.empty()
                ? std::string("; no channel has that name")
                : StrCat("; named ", shown_name, ": ", ListSome(same_name)));
  if (!type.empty()) {
    StrAppend(&message, same_type.empty()
                            ? std::string("; no channel has that type")
                            : StrCat("; of type ", shown_type, ": ",
                                     ListSome(same_type)));
  }
  if (same_name.empty()) {
    // "closest channels in the config:\n  /test (T)\n..." on one line.
    std::string closest =
        configuration::DescribeClosestChannels(config, name, type);
    std::string one_line;
    size_t start = 0;
    while (start < closest.size()) {
      size_t end = closest.find('\n', start);
      if (end == std::string::npos) end = closest.size();
      std::string_view part(closest.data() + start, end - start);
      start = end + 1;
      while (part.starts_with(' ')) part.remove_prefix(1);
      if (part.empty()) continue;
      if (!one_line.empty()) one_line += one_line.ends_with(':') ? " " : ", ";
      one_line += part;
    }
    StrAppend(&message, "; ", one_line);
  }
  return absl::NotFoundError(message);
}

// Every channel of the config, "/name type" each.
std::string ListChannels(const Configuration& config) {
  std::vector<std::string> channels;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      channels.push_back(Describe(*channel));
    }
  }
  return channels.empty()
             ? std::string("the config has no channel")
             : StrCat("channels of the config: ", ListSome(channels));
}

// One line: the message's send times, its channel, where it was first sent
// if it was forwarded to `node` from another, and the message as JSON (or a
// note that it is not a valid message of the channel's type).
void PrintMessage(const Channel& channel, const reflection::Schema& schema,
                  const Node* node, const Context& context,
                  const FlatbufferToJsonOptions& options) {
  const auto* data = static_cast<const uint8_t*>(context.data);
  std::cout << context.monotonic_event_time << " ("
            << context.realtime_event_time << ") " << Describe(channel);
  if (configuration::ChannelIsForwardedTo(channel, node)) {
    std::cout << " from "
              << InlinePrintable(channel.source_node()->string_view());
    if (context.monotonic_remote_time == monotonic_clock::min_time) {
      // A log whose remote record of this message is missing or damaged.
      std::cout << " (remote times unknown)";
    } else {
      std::cout << " (sent there " << context.monotonic_remote_time << " ("
                << context.realtime_remote_time << "), queue index "
                << context.remote_queue_index << ", boot "
                << context.source_boot_uuid.ToString() << ")";
    }
  }
  std::cout << ": ";
  if (!flatbuffers::Verify(schema, *schema.root_table(), data, context.size)) {
    std::cout << "<" << context.size << " bytes that are not a valid "
              << InlinePrintable(channel.type()->string_view()) << ">\n";
  } else {
    std::cout << FlatbufferToJson(data, schema, options) << "\n";
  }
  std::cout << std::flush;
}

// The channel `argv[1]` [of type argv[2]] of `config`, with its schema, or
// the program ends with a message naming what is wrong.
std::pair<const Channel*, const reflection::Schema*> FindChannelAndSchema(
    const Configuration& config, int argc, char** argv) {
  if (argc < 2) {
    ExitForUserError(
        StrCat("give the CHANNEL [TYPE] to print; ", ListChannels(config)));
  }
  const std::string_view type = argc == 3 ? argv[2] : "";
  auto channel = FindDumpChannel(config, argv[1], type);
  if (!channel.ok()) ExitForUserError(StrCat(channel.status().message()));
  const reflection::Schema* schema = (*channel)->schema();
  if (schema == nullptr || schema->root_table() == nullptr) {
    ExitForUserError(
        StrCat("the config has no schema for ", Describe(**channel),
               "; use the config aos_config built (e.g. bazel-bin/examples/"
               "pingpong_config.json)"));
  }
  return {*channel, schema};
}

// --log: every message of the channel in the log, then the log's problems
// (a cut-short file, a damaged chunk) on stderr.
int DumpLog(int argc, char** argv, const FlatbufferToJsonOptions& options) {
  if (FLAGS_fetch) {
    ExitForUserError("--fetch: a log is printed from its start; drop --fetch");
  }
  auto log = logging::OpenLogWithMemoryFlag(FLAGS_log);
  if (!log.ok()) {
    ExitForUserError(StrCat("--log: ", log.status().message()));
  }
  const auto [channel, schema] =
      FindChannelAndSchema(*(*log)->configuration(), argc, argv);
  int64_t printed = 0;
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    if (message->channel != channel) continue;
    PrintMessage(*channel, *schema, (*log)->node(), message->context, options);
    if (FLAGS_count > 0 && ++printed >= FLAGS_count) break;
  }
  for (const std::string& problem : (*log)->problems()) {
    std::cerr << "aos_dump: " << problem << "\n";
  }
  auto lost = (*log)->lost_messages().find(channel);
  if (lost != (*log)->lost_messages().end()) {
    std::cerr << "aos_dump: the logger missed " << lost->second
              << " messages of this channel (it fell behind)\n";
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc > 3) {
    ExitForUserError(StrCat("unexpected argument '", InlinePrintable(argv[3]),
                            "': give CHANNEL [TYPE] (see --help)"));
  }
  if (FLAGS_count < 0) {
    ExitForUserError(
        StrCat("--count=", FLAGS_count, " is negative: give 0 or more"));
  }
  const FlatbufferToJsonOptions options{
      .max_vector_size =
          static_cast<size_t>(std::max(0, FLAGS_max_vector_size))};
  if (!FLAGS_log.empty()) return DumpLog(argc, argv, options);
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  const auto [channel, schema] =
      FindChannelAndSchema(config->message(), argc, argv);

  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  ShmEventLoop loop(&config->message(), "aos_dump", *node);
  loop.SkipTimingReport();
  int64_t printed = 0;
  // Loss is always said: a gap in the queue indices printed means the
  // sender lapped us (we were stopped, or slower than the channel).
  std::optional<uint32_t> last_queue_index;
  auto print = [&](const Context& context) {
    if (last_queue_index.has_value()) {
      const uint32_t lost = context.queue_index - *last_queue_index - 1;
      if (lost > 0 && lost < 0x80000000u) {
        std::cerr << "aos_dump: lost " << lost << " messages on "
                  << Describe(*channel) << " before queue index "
                  << context.queue_index
                  << " (the sender overwrote them before we read them)\n";
      }
    }
    last_queue_index = context.queue_index;
    PrintMessage(*channel, *schema, *node, context, options);
    // Exit() stops the loop's deliveries at once: messages that arrived in
    // the same wakeup as the last one are not printed.
    if (FLAGS_count > 0 && ++printed >= FLAGS_count) loop.Exit();
  };
  auto fetcher = loop.MakeRawFetcher(channel);
  loop.MakeRawWatcher(
      channel, [&](const Context& context, const void*) { print(context); });
  if (FLAGS_fetch) {
    loop.OnRun([&]() {
      if (fetcher->Fetch()) print(fetcher->context());
    });
  }
  loop.Run();
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_dump [--config=FILE] [--node=NAME] CHANNEL [TYPE]\n"
      "       aos_dump --log=FILE.mcap CHANNEL [TYPE]\n"
      "Prints every new message on CHANNEL as JSON, with its send\n"
      "times, until Ctrl-C (or --count); with --log, every message of\n"
      "CHANNEL in the log, then exits. --config defaults to the\n"
      "framework's aos/aos.json (/aos only). See docs/aos_dump.md.");
  return aos::Main(argc, argv);
}
