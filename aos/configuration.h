#ifndef AOS_CONFIGURATION_H_
#define AOS_CONFIGURATION_H_

// Reading, flattening and querying aos configurations.
//
//   absl::StatusOr<aos::FlatbufferDetachedBuffer<aos::Configuration>> config =
//       aos::configuration::ReadConfig("examples/pingpong.json");
//   if (!config.ok()) { std::cerr << config.status().message(); ... }
//   const aos::Channel *ping = aos::configuration::GetChannel(
//       config->message(), "/test", "aos.examples.Ping", "ping", nullptr);
//
// A configuration file is JSON for the aos.Configuration table
// (aos/configuration.fbs). Flattening resolves its `imports` (paths relative
// to the importing file, depth first, each file once), merges everything in
// that order (imports before the importer; later fields win), sorts channels
// by (name, type), validates the result and, when asked, embeds each
// channel's reflection schema. docs/configuration.md describes the rules.
//
// Nothing here is for the realtime path: it reads files and allocates.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/flatbuffers.h"

namespace aos::configuration {

struct ReadConfigOptions {
  // Binary schemas (.bfbs, as flatbuffer_cc_library's *_bfbs targets make)
  // whose root tables are the channel types. Only read when embed_schemas.
  std::vector<std::string> schema_paths;
  // Embed each channel type's schema in Channel.schema. Every type must then
  // have one among schema_paths, or reading fails naming the channel.
  bool embed_schemas = false;
};

// Reads the config at `path` (JSON, flattened or not; or a binary
// aos.Configuration written by aos_config, when the path ends in .bfbs),
// flattens and validates it.
//
// Errors name the file and the culprit: malformed JSON (with line and
// column), a missing import, an import cycle, a duplicate node, a bad channel
// name, max_size, frequency or storage duration, an unknown node, a channel
// without source_node in a multi-node config, a map that loops, or a channel
// type without a schema.
absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfig(
    std::string_view path, const ReadConfigOptions& options = {});

// Like ReadConfig, for JSON text that has no imports; `source_name` is used
// in messages. Handy for tests and tools that hold the config in memory.
absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFromJson(
    std::string_view json, std::string_view source_name = "<config>");

// The reflection schema of aos.Configuration itself.
const reflection::Schema& ConfigurationSchema();

// Prints a configuration as JSON (one field per line when multi_line).
std::string ConfigurationToJson(const Configuration& config,
                                bool multi_line = true);

// True if the configuration names nodes (a multi-node system).
bool MultiNode(const Configuration& config);

// The node called `name`, or null.
const Node* GetNode(const Configuration& config, std::string_view name);

// The name an application gets when it asks for channel `name` of `type` on
// `node` (null in a single-node config): maps are applied, the
// application's own first, then the configuration's; in each list the last
// matching map wins; the result is mapped again until no map matches. A map
// matches when its match name equals the name (or, ending in '*', is a prefix
// of it), its match type (if set) equals `type`, and its match source_node
// (if set) is `node`'s name.
std::string MapChannelName(const Configuration& config, std::string_view name,
                           std::string_view type,
                           std::string_view application_name, const Node* node);

// What an application wants to do with a channel.
enum class ChannelAccess { kRead, kSend };

// The channel an application called `application_name` gets when it asks for
// (`name`, `type`) on `node`, after maps (MapChannelName) and node rules: in
// a multi-node config `node` must be given, the channel must be readable on
// it (it is the source_node or a destination), and if the application is
// listed with nodes, `node` must be one of them; to send (kSend), `node`
// must be the channel's source_node. Returns null when there is
// no such channel, and then, if `why_not` is given, sets it to a sentence
// naming the channel, type, application and node and saying why.
// Cost: O(log channels) after mapping.
const Channel* GetChannel(const Configuration& config, std::string_view name,
                          std::string_view type,
                          std::string_view application_name, const Node* node,
                          std::string* why_not = nullptr,
                          ChannelAccess access = ChannelAccess::kRead);

// Up to `limit` channels of the config most like (`name`, `type`), best
// first, as lines "  /name (type)": same type or a name a few edits away,
// e.g. for "channel /tset of type T is not in the config" messages. Says so
// when nothing is close.
std::string DescribeClosestChannels(const Configuration& config,
                                    std::string_view name,
                                    std::string_view type, size_t limit = 5);

// How long messages of `channel` are kept: its channel_storage_duration if
// set, else the configuration's.
int64_t ChannelStorageDurationNs(const Configuration& config,
                                 const Channel& channel);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_H_
