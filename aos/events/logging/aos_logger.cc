// aos_logger: records the channels this node can read that their logger
// field logs here (or those of them --channels selects) into an MCAP log.
// docs/logging.md.
#include <ctime>
#include <iostream>
#include <regex>

#include "aos/config_flag.h"
#include "aos/configuration.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/logger.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(log_file, "",
              "The log to write (PATH.mcap); replaced if it exists. Give this "
              "or --log_dir.");
// glog defines --log_dir (for its own files, which aos programs never
// write: they log to stderr); here it is the directory of the MCAP log,
// named aos_log_[NODE_]YYYY-MM-DD_HH-MM-SS.mcap (UTC). Only when given on
// the command line: glog's default comes from $GOOGLE_LOG_DIR or
// $TEST_TMPDIR.
DECLARE_string(log_dir);
DEFINE_string(channels, "",
              "Only record channels whose whole name matches this regular "
              "expression (ECMAScript), e.g. '/aos|/test'. Default: all.");
DEFINE_string(compression, "zstd", "Chunk compression: zstd, lz4 or none.");
DEFINE_int64(chunk_size, 1 << 20,
             "Uncompressed bytes per chunk (a chunk is written out when "
             "full), 1024 to 67108864 (64 MiB).");
DEFINE_int32(poll_period_ms, 10,
             "Read the channels every this many ms, all at once (one wakeup "
             "per period); 0: wake up for every message.");
DEFINE_int32(flush_period_ms, 1000,
             "Write the open chunk out at least this often, so a crash loses "
             "at most this much.");

namespace aos::logging {
namespace {

std::string LogPath(const Node* node) {
  const std::string log_dir =
      gflags::GetCommandLineFlagInfoOrDie("log_dir").is_default ? std::string()
                                                                : FLAGS_log_dir;
  if (FLAGS_log_file.empty() == log_dir.empty()) {
    ExitForUserError(
        "give exactly one of --log_file=PATH.mcap and --log_dir=DIR");
  }
  if (!FLAGS_log_file.empty()) return FLAGS_log_file;
  const std::time_t now = std::time(nullptr);
  std::tm utc;
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &utc);
  return StrCat(log_dir, "/aos_log_",
                node == nullptr ? std::string()
                                : StrCat(node->name()->string_view(), "_"),
                stamp, ".mcap");
}

int Main() {
  const std::optional<Compression> compression =
      ParseCompression(FLAGS_compression);
  if (!compression.has_value()) {
    ExitOnFlagError(FlagError("--compression", FLAGS_compression,
                              ": give zstd, lz4 or none"));
  }
  ExitOnFlagError(CheckInRange<int64_t>(
      "--chunk_size", FLAGS_chunk_size, 1024, kMaxChunkSize,
      StrCat(": give 1024 to ", kMaxChunkSize,
             " bytes (readers refuse larger chunks)")));
  ExitOnFlagError(CheckNotNegative("--poll_period_ms", FLAGS_poll_period_ms,
                                   ": give 0 (a wakeup per message) or more"));
  ExitOnFlagError(CheckAtLeast("--flush_period_ms", FLAGS_flush_period_ms, 1,
                               ": give a positive period"));
  std::optional<std::regex> channels;
  // std::regex compiles recursively: an expression of ~100 KB overflows the
  // stack. Channel names are short; so is any expression over them.
  constexpr size_t kMaxChannelsExpression = 1024;
  if (FLAGS_channels.size() > kMaxChannelsExpression) {
    ExitOnFlagError(
        FlagError("--channels", FLAGS_channels,
                  StrCat(": longer than ", kMaxChannelsExpression,
                         " characters; give a shorter expression")));
  }
  if (!FLAGS_channels.empty()) {
    try {
      channels.emplace(FLAGS_channels);
    } catch (const std::regex_error& error) {
      ExitOnFlagError(
          FlagError("--channels", FLAGS_channels,
                    StrCat(": not a regular expression: ", error.what())));
    }
  }
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  const Configuration& configuration = config->message();
  // In a multi-node system it records what its node (--node, or this
  // machine's by hostname) can read.
  auto node_or = ReadNodeFlag(configuration);
  if (!node_or.ok()) ExitForUserError(StrCat(node_or.status().message()));
  const Node* node = *node_or;

  ShmEventLoop loop(&configuration, "aos_logger", node);
  auto writer = McapWriter::Create(
      LogPath(node), {.compression = *compression,
                      .chunk_size = static_cast<size_t>(FLAGS_chunk_size)});
  if (!writer.ok()) ExitForUserError(std::string(writer.status().message()));
  LoggerOptions options;
  options.flush_period = std::chrono::milliseconds(FLAGS_flush_period_ms);
  options.poll_period = std::chrono::milliseconds(FLAGS_poll_period_ms);
  if (channels.has_value()) {
    options.channel_filter = [&channels](const Channel& channel) {
      return std::regex_match(channel.name()->str(), *channels);
    };
  }
  auto logger = Logger::Make(&loop, std::move(*writer), options);
  if (!logger.ok()) ExitForUserError(std::string(logger.status().message()));
  std::cerr << "aos_logger: recording " << (*logger)->channel_count()
            << " channels into " << (*logger)->path() << "\n";
  loop.Run();
  // What was sent before the stop and not yet watched (--poll_period_ms=0;
  // Finish() polls the rest).
  loop.DeliverRemainingMessages();
  absl::Status status = (*logger)->Finish();
  if (!status.ok()) ExitForUserError(std::string(status.message()));
  std::cerr << "aos_logger: recorded " << (*logger)->recorded_messages()
            << " messages into " << (*logger)->path();
  if ((*logger)->lost_messages() > 0) {
    std::cerr << "; missed " << (*logger)->lost_messages()
              << " (it fell behind; counts per channel are in the log)";
  }
  std::cerr << "\n";
  return 0;
}

}  // namespace
}  // namespace aos::logging

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_logger (--log_file=PATH.mcap | --log_dir=DIR)\n"
      "    [--config=FILE] [--channels=REGEX] [--node=NAME]\n"
      "    [--compression=zstd|lz4|none] [--shm_base=DIR]\n"
      "--log_dir=DIR writes DIR/aos_log_[NODE_]YYYY-MM-DD_HH-MM-SS.mcap.\n"
      "Records the channels this node can read that their logger field\n"
      "logs here (NOT_LOGGED: never; docs/logging.md), or those of them\n"
      "--channels selects, into an MCAP log with the configuration and\n"
      "schemas, until Ctrl-C or SIGTERM. Open it with aos_dump --log,\n"
      "replay it with aos::logging::LogReader, or open it in Foxglove.");
  aos::RefuseArguments(argc, argv);
  return aos::logging::Main();
}
