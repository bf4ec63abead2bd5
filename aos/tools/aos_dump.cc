// aos_dump: prints the messages of a channel as JSON, using the schema the
// configuration embeds (aos_config puts one in every channel).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "aos/config_flag.h"
#include "aos/configuration_lookup.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_memory_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_report_codec.h"
#include "aos/init.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/node_flag.h"
#include "aos/tools/aos_dump_channel.h"
#include "aos/tools/origin_lines.h"
#include "aos/util/flag_checks.h"
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
DEFINE_double(nothing_warning_s, 3,
              "If nothing came for this long and a channel's shared memory "
              "file was not there when aos_dump started (no process had "
              "opened it under --shm_base), say so once (0: never).");
DEFINE_bool(origins, false,
            "Under each message, its path origins, one line each: id (hex; "
            "with --log, also the timer or phased loop the log's timing "
            "reports name), hops, time, age at the message's send time, "
            "uncertainty. -v is the same.");

namespace aos {
namespace {

// One line: the message's send times, its channel, where it was first sent
// if it was forwarded to `node` from another, and the message as JSON (or a
// note that it is not a valid message of the channel's type); then `after`
// (its origin lines, or nothing).
void PrintMessage(const Channel& channel, const reflection::Schema& schema,
                  const Node* node, const Context& context,
                  const FlatbufferToJsonOptions& options,
                  std::string_view after) {
  const auto* data = static_cast<const uint8_t*>(context.data);
  std::cout << context.monotonic_event_time << " ("
            << context.realtime_event_time << ") "
            << DescribeDumpChannel(channel);
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
  std::cout << after << std::flush;
}

// The channels `argv[1]` [of type argv[2]] of `config` as `node` sees them
// (FindDumpChannels), each with its schema, or the program ends with a
// message naming what is wrong. `config_flag`: the --config it came from
// ("" for the built-in one), named when a channel is not found; null for a
// log's own.
std::vector<std::pair<const Channel*, const reflection::Schema*>>
FindChannelsAndSchemas(const Configuration& config, const Node* node, int argc,
                       char** argv, const std::string* config_flag) {
  if (argc < 2) {
    ExitForUserError(
        StrCat("give the CHANNEL [TYPE] to print; ", ListDumpChannels(config)));
  }
  const std::string_view type = argc == 3 ? argv[2] : "";
  auto channels = FindDumpChannels(config, argv[1], type, node);
  if (config_flag != nullptr && absl::IsNotFound(channels.status())) {
    ExitForUserError(
        NameTheConfig(StrCat(channels.status().message()), *config_flag));
  }
  if (!channels.ok()) ExitForUserError(StrCat(channels.status().message()));
  std::vector<std::pair<const Channel*, const reflection::Schema*>> found;
  for (const Channel* channel : *channels) {
    const reflection::Schema* schema = channel->schema();
    if (schema == nullptr || schema->root_table() == nullptr) {
      ExitForUserError(
          StrCat("the config has no schema for ", DescribeDumpChannel(*channel),
                 "; use the config aos_config built (e.g. bazel-bin/examples/"
                 "pingpong_config.json)"));
    }
    found.emplace_back(channel, schema);
  }
  return found;
}

// The names of the origin ids in the log at `path`: its timers and phased
// loops, from every timing report it holds (a first pass over the log).
// Reports of a layout this build cannot read, or that do not decode, name
// nothing; damage is said by the pass that prints.
OriginNames ReadOriginNames(const std::string& path) {
  OriginNames names;
  auto log = logging::OpenLogWithMemoryFlag(path);
  if (!log.ok()) return names;
  std::map<const Channel*, bool> readable;
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    const Channel* channel = message->channel;
    if (channel->type()->string_view() != "aos.timing.Report") continue;
    auto known = readable.find(channel);
    if (known == readable.end()) {
      known =
          readable
              .emplace(
                  channel,
                  channel->schema() == nullptr ||
                      timing::CheckTimingReportSchema(*channel->schema()).ok())
              .first;
    }
    if (!known->second) continue;
    absl::StatusOr<timing::ReportContents> report =
        timing::DecodeTimingReport(std::span<const uint8_t>(
            static_cast<const uint8_t*>(message->context.data),
            message->context.size));
    if (report.ok()) names.AddReport(*report);
  }
  return names;
}

// --log: every message of the channel in the log (with --origins, its
// origins under it), then the log's problems (a cut-short file, a damaged
// chunk) on stderr.
int DumpLog(int argc, char** argv, const FlatbufferToJsonOptions& options) {
  if (FLAGS_fetch) {
    ExitForUserError("--fetch: a log is printed from its start; drop --fetch");
  }
  auto log = logging::OpenLogWithMemoryFlag(FLAGS_log);
  if (!log.ok()) {
    ExitForUserError(StrCat("--log: ", log.status().message()));
  }
  const auto channels = FindChannelsAndSchemas(
      *(*log)->configuration(), (*log)->node(), argc, argv, nullptr);
  std::map<const Channel*, const reflection::Schema*> schemas(channels.begin(),
                                                              channels.end());
  const OriginNames names =
      FLAGS_origins ? ReadOriginNames(FLAGS_log) : OriginNames();
  int64_t printed = 0;
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    auto schema = schemas.find(message->channel);
    if (schema == schemas.end()) continue;
    std::string origins;
    if (FLAGS_origins) {
      std::string_view unknown;
      if (!message->origins_known) {
        unknown = (*log)->records_origins()
                      ? "its origins record in the log is damaged"
                      : "the log does not record origins: an aos_logger "
                        "before 2026-11-26 wrote it";
      }
      origins = OriginLines(message->context, unknown, names);
    }
    PrintMessage(*message->channel, *schema->second, (*log)->node(),
                 message->context, options, origins);
    if (FLAGS_count > 0 && ++printed >= FLAGS_count) break;
  }
  for (const std::string& problem : (*log)->problems()) {
    std::cerr << "aos_dump: " << problem << "\n";
  }
  for (const auto& [channel, schema] : channels) {
    auto lost = (*log)->lost_messages().find(channel);
    if (lost != (*log)->lost_messages().end()) {
      std::cerr << "aos_dump: the logger missed " << lost->second
                << " messages of " << DescribeDumpChannel(*channel)
                << " (it fell behind)\n";
    }
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc > 3) {
    ExitForUserError(StrCat("unexpected argument '", InlinePrintable(argv[3]),
                            "': give CHANNEL [TYPE] (see --help)"));
  }
  ExitOnFlagError(
      CheckNotNegative("--nothing_warning_s", FLAGS_nothing_warning_s));
  ExitOnFlagError(CheckNotNegative("--count", FLAGS_count));
  const FlatbufferToJsonOptions options{
      .max_vector_size =
          static_cast<size_t>(std::max(0, FLAGS_max_vector_size))};
  if (!FLAGS_log.empty()) return DumpLog(argc, argv, options);
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  // The node first: the channel's name goes through its maps.
  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  const auto channels = FindChannelsAndSchemas(config->message(), *node, argc,
                                               argv, &FLAGS_config);
  ShmEventLoop loop(&config->message(), "aos_dump", *node);
  loop.SkipTimingReport();
  // Whose shared memory no process had opened before we did: nothing will
  // come on them unless a sender starts, and a mistyped --shm_base looks
  // just like that.
  std::vector<const Channel*> unopened;
  for (const auto& [channel, schema] : channels) {
    std::error_code error;
    if (!std::filesystem::exists(
            ShmEventLoop::ShmPath(loop.shm_base(), channel), error)) {
      unopened.push_back(channel);
    }
  }
  int64_t printed = 0;
  // Destroyed before the loop.
  std::vector<std::unique_ptr<RawFetcher>> fetchers;
  for (const auto& [channel, schema] : channels) {
    // Loss is always said: a gap in the queue indices printed means the
    // sender lapped us (we were stopped, or slower than the channel).
    auto last_queue_index = std::make_shared<std::optional<uint32_t>>();
    auto print = [&, channel = channel, schema = schema,
                  last_queue_index](const Context& context) {
      if (last_queue_index->has_value()) {
        const uint32_t lost = context.queue_index - **last_queue_index - 1;
        if (lost > 0 && lost < 0x80000000u) {
          std::cerr << "aos_dump: lost " << lost << " messages on "
                    << DescribeDumpChannel(*channel) << " before queue index "
                    << context.queue_index
                    << " (the sender overwrote them before we read them)\n";
        }
      }
      *last_queue_index = context.queue_index;
      // Live, the ids only: the reports that name them may not have come
      // yet.
      PrintMessage(*channel, *schema, *node, context, options,
                   FLAGS_origins ? OriginLines(context, "", OriginNames())
                                 : std::string());
      // Exit() stops the loop's deliveries at once: messages that arrived in
      // the same wakeup as the last one are not printed.
      ++printed;
      if (FLAGS_count > 0 && printed >= FLAGS_count) loop.Exit();
    };
    RawFetcher* const fetcher =
        fetchers.emplace_back(loop.MakeRawFetcher(channel)).get();
    loop.MakeRawWatcher(channel, [print](const Context& context, const void*) {
      print(context);
    });
    if (FLAGS_fetch) {
      loop.OnRun([fetcher, print]() {
        if (fetcher->Fetch()) print(fetcher->context());
      });
    }
  }
  if (FLAGS_nothing_warning_s > 0 && !unopened.empty()) {
    TimerHandler* nothing = loop.AddTimer([&]() {
      if (printed > 0) return;
      std::vector<std::string> described;
      for (const Channel* channel : unopened) {
        described.push_back(DescribeDumpChannel(*channel));
      }
      std::cerr << "aos_dump: nothing on " << StrJoin(described, ", ")
                << " yet; no process had opened "
                << (unopened.size() == 1 ? "it" : "them")
                << " under --shm_base="
                << InlinePrintable(loop.shm_base(), kPrintablePathMaxBytes)
                << " (is that the --shm_base its senders use?); still "
                   "waiting\n";
    });
    loop.OnRun([&]() {
      nothing->Schedule(loop.monotonic_now() +
                        std::chrono::nanoseconds(static_cast<int64_t>(
                            FLAGS_nothing_warning_s * 1e9)));
    });
  }
  loop.Run();
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  // -v alone is --origins (glog's verbosity stays --v=N).
  static char origins_flag[] = "--origins";
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "-v") argv[i] = origins_flag;
  }
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_dump [--config=FILE] [--node=NAME] [-v] CHANNEL [TYPE]\n"
      "       aos_dump --log=FILE.mcap [-v] CHANNEL [TYPE]\n"
      "Prints every new message on CHANNEL as JSON, with its send\n"
      "times, until Ctrl-C (or --count); with --log, every message of\n"
      "CHANNEL in the log, then exits. Without a TYPE, every channel of\n"
      "that name, each line naming its type. CHANNEL goes through the\n"
      "config's maps for the node (/aos may be /pi1/aos); TYPE may be part\n"
      "of the type (Ping). --config defaults to the framework's\n"
      "aos/aos.json (/aos only). -v (--origins): each message's path\n"
      "origins under it,\n"
      "one line each:\n"
      "  origin 0x6b2f3a10 (timer ping of ping): hops 1, time\n"
      "  4361.113456789sec, age 10268.123 us ±0 us\n"
      "(the name only with --log, from the log's timing reports). See\n"
      "docs/aos_dump.md.");
  return aos::Main(argc, argv);
}
