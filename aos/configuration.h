#ifndef AOS_CONFIGURATION_H_
#define AOS_CONFIGURATION_H_

// Reading and flattening aos configurations. Querying them (channels as an
// application sees them, nodes, maps) is in aos/configuration_lookup.h,
// which this header includes, so one include serves both.
//
//   absl::StatusOr<aos::FlatbufferDetachedBuffer<aos::Configuration>> config =
//       aos::configuration::ReadConfig("examples/pingpong.json");
//   if (!config.ok()) { std::cerr << config.status().message(); ... }
//
// A configuration file is JSON for the aos.Configuration table
// (aos/configuration.fbs). Flattening resolves its `imports` (paths relative
// to the importing file, depth first, each file at most once), merges
// everything in that order (imports before the importer; later fields win),
// sorts channels by (name, type), validates the result and, when asked, embeds
// each channel's reflection schema. docs/configuration.md describes the rules.
//
// Nothing here is for the realtime path: it reads files and allocates.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration_file.h"
#include "aos/configuration_generated.h"
#include "aos/configuration_lookup.h"
#include "aos/flatbuffers.h"

namespace aos::configuration {

struct ReadConfigOptions {
  // Binary schemas (.bfbs, as flatbuffer_cc_library's *_bfbs targets make)
  // whose root tables are the channel types. Only read when embed_schemas.
  std::vector<std::string> schema_paths;
  // Embed each channel type's schema in Channel.schema. Every type must then
  // have one among schema_paths, or reading fails naming the channel.
  bool embed_schemas = false;
  // The largest file (config, import or schema) read, in bytes; a larger one
  // is refused naming it and both sizes.
  int64_t max_file_bytes = kDefaultMaxConfigFileBytes;
};

// Reads the config at `path` (JSON, flattened or not; or a binary
// aos.Configuration written by aos_config, when the path ends in .bfbs),
// flattens and validates it.
//
// Errors are one line (the JSON ones add the offending line and a caret)
// naming the file and the culprit: a file that is missing, not a regular
// file, too large, a symlink loop or too long a name
// (aos/configuration_file.h); malformed JSON (with line and column); an
// import cycle; a bad channel; an unknown node; a map that loops; a channel
// type without a schema. docs/configuration.md lists every check.
// Cost: near-linear in the size of the config (maps included).
absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfig(
    std::string_view path, const ReadConfigOptions& options = {});

// Like ReadConfig, for JSON text that has no imports; `source_name` is used
// in messages. Handy for tests and tools that hold the config in memory.
absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFromJson(
    std::string_view json, std::string_view source_name = "<config>");

// The reflection schema of aos.Configuration itself.
const reflection::Schema& ConfigurationSchema();

// Prints a configuration as JSON (one field per line when multi_line).
// Strict JSON prints the NaN defaults of embedded schemas (a timing
// report's statistics) as the string "nan" (infinities as "inf", "-inf"),
// which ReadConfig reads back as NaN: the print of what it reads is the same
// print (a fixed point), as aos_config_check's output must be.
// strict_json = false prints them bare (nan, flatbuffers' dialect), as
// aos_config does.
std::string ConfigurationToJson(const Configuration& config,
                                bool multi_line = true,
                                bool strict_json = true);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_H_
