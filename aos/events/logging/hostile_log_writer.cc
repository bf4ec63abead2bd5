// For hostile_log_reading_test: writes into --dir a good ping/pong log and
// hostile copies of it (hostile_log.h), built at test time so that testdata
// stays small:
//   clean.mcap     a 3 s ping/pong run in simulation
//   bomb.mcap      clean.mcap with the decompression bomb: one zstd
//                  chunk of 1 GiB of zeros (about 32 KiB compressed), after a
//                  ping of the run's middle, copied 3 times
//   overlap.mcap   clean.mcap with 4 chunks of 20 MiB of zeros, each with a
//                  ping at its start and at its end, all overlapping in time
//   strings.mcap   clean.mcap with a chunk whose compression name and an
//                  attachment whose name hold a NUL, terminal escape
//                  sequences and 4 MiB more
// The bombs' pings are copies of a real ping (valid messages) with sequence
// numbers past the run's.
#include <iostream>

#include "aos/events/logging/hostile_log.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(dir, "", "Directory to write the logs into.");

namespace aos::logging {
namespace {

// The MCAP channel id, log time and bytes of the 150th ping of `path`.
McapMessage MiddlePing(const std::string& path, std::string* data) {
  auto reader = McapReader::Open(path);
  if (!reader.ok()) ExitForUserError(std::string(reader.status().message()));
  int pings = 0;
  while (std::optional<McapMessage> message = (*reader)->Next()) {
    const McapChannel& channel = (*reader)->channels().at(message->channel_id);
    auto type = channel.metadata.find(std::string(kChannelType));
    if (type == channel.metadata.end() || type->second != "aos.examples.Ping" ||
        ++pings < 150) {
      continue;
    }
    *data = std::string(message->data);
    message->data = *data;
    return *message;
  }
  ExitForUserError(path + ": fewer than 150 pings");
}

int Main() {
  if (FLAGS_dir.empty()) ExitForUserError("give --dir=DIR");
  const std::string clean = FLAGS_dir + "/clean.mcap";
  testing::RecordPingPong(clean, Compression::kZstd, std::chrono::seconds(3));
  std::string ping_data;
  const McapMessage ping = MiddlePing(clean, &ping_data);
  const std::string data = testing::DataSection(testing::ReadWholeFile(clean));
  const auto ping_at = [&](uint64_t time, uint32_t sequence) {
    return testing::MessageRecord(ping.channel_id, sequence, time, time,
                                  ping_data);
  };

  const std::string ping_record = ping_at(ping.log_time + 1, 100000);
  const uint64_t gib = uint64_t{1} << 30;
  const uint64_t zeros = gib - ping_record.size() - 9;
  const std::string gib_chunk = testing::ZstdChunkRecord(
      ping.log_time + 1, ping.log_time + 1,
      {{.bytes = ping_record + testing::UnknownRecordPrefix(zeros),
        .zeros = zeros}});
  testing::WriteWholeFile(
      FLAGS_dir + "/bomb.mcap",
      data + gib_chunk + gib_chunk + gib_chunk + testing::EndWithoutSummary());

  std::string overlap;
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t first = ping.log_time + 1;
    const uint64_t last = ping.log_time + 500'000'000;
    const uint64_t overlap_zeros = 20 << 20;
    overlap += testing::ZstdChunkRecord(
        first, last,
        {{.bytes = ping_at(first, 100000 + 2 * i) +
                   testing::UnknownRecordPrefix(overlap_zeros),
          .zeros = overlap_zeros},
         {.bytes = ping_at(last, 100001 + 2 * i)}});
  }
  testing::WriteWholeFile(FLAGS_dir + "/overlap.mcap",
                          data + overlap + testing::EndWithoutSummary());

  const std::string evil = std::string("zst\0d\x1b[2J\x1b]0;pwned\x07\n", 20) +
                           std::string(4 << 20, 'z');
  testing::WriteWholeFile(
      FLAGS_dir + "/strings.mcap",
      data +
          testing::ChunkRecord(ping.log_time + 1, ping.log_time + 1, 10, evil,
                               std::string(10, 'x')) +
          testing::AttachmentRecord(evil, "data", 12345) +
          testing::EndWithoutSummary());
  return 0;
}

}  // namespace
}  // namespace aos::logging

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: hostile_log_writer --dir=DIR\n"
                  "Writes a ping/pong log and hostile copies of it, for "
                  "hostile_log_reading_test.");
  return aos::logging::Main();
}
