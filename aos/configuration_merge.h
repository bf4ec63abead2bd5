#ifndef AOS_CONFIGURATION_MERGE_H_
#define AOS_CONFIGURATION_MERGE_H_

// Merging parsed configuration files into one configuration, with AOS's
// rules, so a set of AOS config files flattens here to what AOS makes of it:
//
// - Channels merge by (name, type), field by field: a field written in a
//   later file wins, even when it writes the default. destination_nodes
//   merge by connection name (each Connection field by field, sorted by
//   name); logger_nodes and each connection's timestamp_logger_nodes are
//   united and sorted. Channels come out sorted by (name, type).
// - Nodes merge by name (fields win; hostnames and tags united, sorted) and
//   come out sorted by name.
// - Applications merge by name (fields win; maps appended in load order;
//   nodes united, sorted; args replaced whole), sorted by name.
// - Maps are appended in load order.
// - The top-level channel_storage_duration of the last file that sets it
//   wins.
//
// Used by ReadConfig (aos/configuration.h); not for the realtime path.

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/configuration_validation.h"
#include "aos/flatbuffers.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::configuration {

// One parsed configuration file.
struct ParsedConfigFile {
  // As shown to the user in messages.
  std::string path;
  flatbuffers::DetachedBuffer buffer;
  const Configuration* config() const {
    return flatbuffers::GetRoot<Configuration>(buffer.data());
  }
};

// Reflection schemas to embed, by the fully qualified root table name.
using SchemasByType =
    std::map<std::string, const reflection::Schema*, std::less<>>;

// Merges `files` (in load order: imports before their importer) into one
// configuration and records in `sources` which files each entry came from.
// With `schemas`, each channel gets the schema of its type; a type without
// one adds a line naming the channel to `missing_schema`. The result keeps
// pointers to nothing: `files` may go away afterwards. Cost: O(n log n) in
// the number of entries, plus copying them once.
FlatbufferDetachedBuffer<Configuration> MergeConfigFiles(
    std::span<const ParsedConfigFile> files, const SchemasByType* schemas,
    ConfigSources* sources, std::vector<std::string>* missing_schema);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_MERGE_H_
