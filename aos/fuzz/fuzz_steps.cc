#include "aos/fuzz/fuzz_steps.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/path_origins.h"
#include "aos/events/timing_report_codec.h"
#include "aos/events/timing_report_format.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/scoped_fd.h"
#include "glog/logging.h"

namespace aos::fuzz {
namespace {

std::string_view AsText(std::span<const uint8_t> input) {
  return {reinterpret_cast<const char*>(input.data()), input.size()};
}

// Parses `json` against `schema`; if it parses, checks that its print is a
// fixpoint of print(parse(.)).
bool JsonRoundTrip(std::string_view json, const reflection::Schema& schema) {
  auto parsed = JsonToFlatbuffer(json, schema);
  if (!parsed.ok()) {
    CHECK(!parsed.status().message().empty()) << "an error without a message";
    return false;
  }
  const std::string printed = FlatbufferToJson(parsed->data(), schema);
  auto reparsed = JsonToFlatbuffer(printed, schema);
  CHECK(reparsed.ok()) << "our own print does not parse: "
                       << reparsed.status().message() << "\n"
                       << printed;
  CHECK_EQ(FlatbufferToJson(reparsed->data(), schema), printed)
      << "print is not a fixpoint";
  return true;
}

void WriteFile(const std::string& path, std::string_view contents) {
  const ScopedFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
  PCHECK(fd.valid()) << path;
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t written =
        write(fd.get(), contents.data() + done, contents.size() - done);
    PCHECK(written > 0) << path;
    done += static_cast<size_t>(written);
  }
}

// A problem or error line from reading a log: one line of printable ASCII,
// bounded, starting with the file's name.
void CheckLine(std::string_view line, std::string_view path) {
  CHECK(line.starts_with(path))
      << "a line that does not name the file: " << line;
  CHECK_LE(line.size(), 4096u) << "a line of " << line.size() << " bytes";
  for (const char c : line) {
    CHECK(c >= 0x20 && c <= 0x7e)
        << "byte " << static_cast<int>(static_cast<unsigned char>(c))
        << " in: " << line;
  }
}

}  // namespace

bool McapStep(std::span<const uint8_t> input, const std::string& path) {
  WriteFile(path, AsText(input));
  constexpr uint64_t kBudget = uint64_t{32} << 20;
  auto log =
      logging::LogFileReader::Open(path, {.memory_budget_bytes = kBudget});
  if (!log.ok()) {
    CheckLine(std::string(log.status().message()), path);
    // Not an aos log: read it as MCAP.
    auto mcap = logging::McapReader::Open(
        path, {.max_chunk_bytes = kBudget, .memory_budget_bytes = kBudget});
    if (!mcap.ok()) {
      CheckLine(std::string(mcap.status().message()), path);
      return false;
    }
    while ((*mcap)->Next().has_value()) {
    }
    for (const std::string& problem : (*mcap)->problems()) {
      CheckLine(problem, path);
    }
    return false;
  }
  while (std::optional<logging::LogMessage> message = (*log)->Next()) {
    // Origins handed out are ones that could be true (FromRaw's rules
    // against the message's send time), and none where unknown.
    const Context& context = message->context;
    uint32_t invalid = 0;
    CHECK(PathOrigins::FromRaw(
              context.origins.ToRaw(),
              context.monotonic_event_time.time_since_epoch().count(),
              &invalid) == context.origins);
    CHECK_EQ(invalid, 0u) << "impossible origins handed out";
    CHECK(message->origins_known || context.origins.empty());
    const reflection::Schema* schema = message->channel->schema();
    if (schema == nullptr || schema->root_table() == nullptr) continue;
    const auto* data = static_cast<const uint8_t*>(message->context.data);
    if (flatbuffers::Verify(*schema, *schema->root_table(), data,
                            message->context.size)) {
      (void)FlatbufferToJson(data, *schema, {.max_vector_size = 100});
    }
  }
  for (const std::string& problem : (*log)->problems()) {
    CheckLine(problem, path);
  }
  return true;
}

int JsonStep(std::span<const uint8_t> input) {
  const std::string_view json = AsText(input);
  return static_cast<int>(
             JsonRoundTrip(json, configuration::ConfigurationSchema())) +
         static_cast<int>(JsonRoundTrip(
             json, *reflection::GetSchema(timing::ReportBinarySchema::data())));
}

bool TimingReportStep(std::span<const uint8_t> input) {
  auto decoded = timing::DecodeTimingReport(input);
  if (!decoded.ok()) {
    CHECK(!decoded.status().message().empty()) << "an error without a message";
    return false;
  }
  // Formatting names channels through a config; an empty one exercises the
  // "unknown index" paths, which untrusted reports reach.
  static const FlatbufferDetachedBuffer<Configuration> empty =
      configuration::ReadConfigFromJson("{}").value();
  (void)FormatTimingTable(*decoded, empty.message(), TimeUnit::kMicroseconds);
  (void)FormatTimingReportAos(*decoded, empty.message());
  (void)TimingReportToJsonLine(*decoded, empty.message(), false);
  const flatbuffers::DetachedBuffer encoded =
      timing::EncodeReportContents(*decoded);
  auto again = timing::DecodeTimingReport({encoded.data(), encoded.size()});
  CHECK(again.ok()) << "our own encoding does not decode: "
                    << again.status().message();
  const flatbuffers::DetachedBuffer reencoded =
      timing::EncodeReportContents(*again);
  CHECK(std::string_view(reinterpret_cast<const char*>(encoded.data()),
                         encoded.size()) ==
        std::string_view(reinterpret_cast<const char*>(reencoded.data()),
                         reencoded.size()))
      << "decode(encode(.)) changed the report";
  return true;
}

bool ConfigStep(std::span<const uint8_t> input, const std::string& directory) {
  static constexpr const char* kNames[] = {"a.json", "b.json", "c.json",
                                           "d.json"};
  std::vector<std::string_view> files;
  std::string_view rest = AsText(input);
  while (files.size() < 3) {
    const size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) break;
    files.push_back(rest.substr(0, nul));
    rest.remove_prefix(nul + 1);
  }
  files.push_back(rest);
  for (size_t i = 0; i < 4; ++i) {
    const std::string path = directory + "/" + kNames[i];
    if (i < files.size()) {
      WriteFile(path, files[i]);
    } else {
      unlink(path.c_str());
    }
  }
  auto config = configuration::ReadConfig(directory + "/a.json");
  if (!config.ok()) {
    CHECK(!config.status().message().empty()) << "an error without a message";
    return false;
  }
  const std::string printed =
      configuration::ConfigurationToJson(config->message());
  auto again = configuration::ReadConfigFromJson(printed, "printed");
  CHECK(again.ok()) << "a flattened config does not read back: "
                    << again.status().message() << "\n"
                    << printed;
  CHECK_EQ(configuration::ConfigurationToJson(again->message()), printed)
      << "flattening is not a fixpoint";
  return true;
}

}  // namespace aos::fuzz
