// The MCAP writer alone (no shared memory, no event loop): how fast
// McapWriter takes 1 KiB messages into a file on /dev/shm, per compression,
// for incompressible (random) and repetitive messages. Separates the
// writer's cost from the logger's (logger_bench).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "aos/events/logging/mcap_writer.h"
#include "aos/init.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_int32(messages, 400000, "1 KiB messages per run.");

namespace aos::bench {
namespace {

void Run(logging::Compression compression, bool random) {
  constexpr size_t kSize = 1024;
  const std::string path = "/dev/shm/mcap_writer_benchmark.mcap";
  auto writer = logging::McapWriter::Create(path, {.compression = compression});
  if (!writer.ok()) ExitForUserError(std::string(writer.status().message()));
  auto channel = (*writer)->AddChannel(0, "/bench", "flatbuffer", {});
  if (!channel.ok()) ExitForUserError(std::string(channel.status().message()));
  // Payloads made before timing, so only the writer is measured.
  std::vector<uint64_t> payloads(kSize / 8 * 64);
  uint64_t state = 88172645463325252ull;
  for (size_t i = 0; i < payloads.size(); ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    payloads[i] = random ? state : i % 16;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < FLAGS_messages; ++i) {
    const char* data =
        reinterpret_cast<const char*>(payloads.data()) + (i % 64) * kSize;
    absl::Status status = (*writer)->WriteMessage(
        *channel, i, i * 1000, i * 1000, std::string_view(data, kSize));
    if (!status.ok()) ExitForUserError(std::string(status.message()));
  }
  absl::Status status = (*writer)->Close();
  if (!status.ok()) ExitForUserError(std::string(status.message()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("  %-5s %-10s %7.1f MB/s  file %6.1f MB\n",
              compression == logging::Compression::kNone
                  ? "none"
                  : std::string(logging::CompressionName(compression)).c_str(),
              random ? "random" : "repetitive",
              FLAGS_messages * kSize / seconds / 1e6,
              (*writer)->bytes_written() / 1e6);
  unlink(path.c_str());
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: mcap_writer_benchmark [--messages=400000]\n"
                  "McapWriter's rate for 1 KiB messages into /dev/shm.");
  aos::RefuseArguments(argc, argv);
  std::printf("McapWriter, %d messages of 1 KiB to /dev/shm:\n",
              FLAGS_messages);
  for (bool random : {true, false}) {
    for (auto compression :
         {aos::logging::Compression::kNone, aos::logging::Compression::kLz4,
          aos::logging::Compression::kZstd}) {
      aos::bench::Run(compression, random);
    }
  }
  return 0;
}
