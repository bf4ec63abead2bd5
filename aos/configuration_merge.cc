#include "aos/configuration_merge.h"

#include <set>

#include "aos/configuration.h"
#include "aos/flatbuffer_merge.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::configuration {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Table;
using StringVector = flatbuffers::Vector<Offset<flatbuffers::String>>;

const Table* AsTable(const void* table) {
  return reinterpret_cast<const Table*>(table);
}

const reflection::Object& ObjectNamed(std::string_view name) {
  const reflection::Object* object =
      ConfigurationSchema().objects()->LookupByKey(std::string(name).c_str());
  CHECK(object != nullptr) << "aos/configuration.fbs has no " << name;
  return *object;
}

// The definitions of one entry (a channel, node, application, connection),
// in load order, and the files they came from.
struct Layers {
  std::vector<const Table*> tables;
  std::vector<std::string> files;

  void Add(const void* table, const std::string& file) {
    tables.push_back(AsTable(table));
    if (files.empty() || files.back() != file) files.push_back(file);
  }
};

// The union of a string-list field over layers, sorted; nullopt when no layer
// has the field (so merging leaves it absent).
using StringSet = std::optional<std::set<std::string_view>>;

template <typename T>
void Unite(const StringVector* (T::*field)() const, const T& table,
           StringSet* set) {
  const StringVector* strings = (table.*field)();
  if (strings == nullptr) return;
  if (!set->has_value()) set->emplace();
  for (const flatbuffers::String* s : *strings)
    (*set)->insert(s->string_view());
}

Offset<StringVector> BuildStrings(FlatBufferBuilder* fbb,
                                  const StringSet& set) {
  if (!set.has_value()) return 0;
  std::vector<Offset<flatbuffers::String>> offsets;
  offsets.reserve(set->size());
  for (std::string_view s : *set) offsets.push_back(fbb->CreateString(s));
  return fbb->CreateVector(offsets);
}

// Merges `layers` plus one last layer built by `build_top` (in its own
// builder, finished) into `fbb`.
Offset<Table> MergeWithTop(
    FlatBufferBuilder* fbb, std::string_view object_name,
    const std::vector<const Table*>& layers,
    const std::function<void(FlatBufferBuilder*)>& build_top) {
  FlatBufferBuilder top;
  build_top(&top);
  std::vector<const Table*> tables = layers;
  tables.push_back(flatbuffers::GetAnyRoot(top.GetBufferPointer()));
  return MergeFlatbufferTables(fbb, ConfigurationSchema(),
                               ObjectNamed(object_name), tables);
}

Offset<Channel> MergeChannel(FlatBufferBuilder* fbb, const Layers& layers,
                             const reflection::Schema* schema) {
  std::map<std::string_view, std::vector<const Table*>> connections;
  std::map<std::string_view, StringSet> timestamp_logger_nodes;
  StringSet logger_nodes;
  for (const Table* table : layers.tables) {
    const auto& channel = *reinterpret_cast<const Channel*>(table);
    Unite(&Channel::logger_nodes, channel, &logger_nodes);
    if (channel.destination_nodes() == nullptr) continue;
    for (const Connection* connection : *channel.destination_nodes()) {
      const std::string_view name = StringView(connection->name());
      connections[name].push_back(AsTable(connection));
      Unite(&Connection::timestamp_logger_nodes, *connection,
            &timestamp_logger_nodes[name]);
    }
  }
  const bool any_destinations = !connections.empty();
  return Offset<Channel>(
      MergeWithTop(
          fbb, "aos.Channel", layers.tables,
          [&](FlatBufferBuilder* top) {
            std::vector<Offset<Connection>> merged;
            for (const auto& [name, connection_layers] : connections) {
              const StringSet& loggers = timestamp_logger_nodes[name];
              merged.emplace_back(
                  MergeWithTop(top, "aos.Connection", connection_layers,
                               [&](FlatBufferBuilder* connection_top) {
                                 const auto nodes =
                                     BuildStrings(connection_top, loggers);
                                 ConnectionBuilder builder(*connection_top);
                                 if (!nodes.IsNull()) {
                                   builder.add_timestamp_logger_nodes(nodes);
                                 }
                                 connection_top->Finish(builder.Finish());
                               })
                      .o);
            }
            const auto destinations =
                any_destinations
                    ? top->CreateVector(merged)
                    : Offset<flatbuffers::Vector<Offset<Connection>>>(0);
            const auto loggers = BuildStrings(top, logger_nodes);
            Offset<reflection::Schema> schema_offset = 0;
            if (schema != nullptr) {
              // aos/configuration.fbs includes reflection.fbs, so its own
              // schema describes reflection.Schema too.
              schema_offset = Offset<reflection::Schema>(
                  CopyFlatbufferTable(top, ConfigurationSchema(),
                                      ObjectNamed("reflection.Schema"),
                                      *AsTable(schema))
                      .o);
            }
            ChannelBuilder builder(*top);
            if (!destinations.IsNull()) {
              builder.add_destination_nodes(destinations);
            }
            if (!loggers.IsNull()) builder.add_logger_nodes(loggers);
            if (!schema_offset.IsNull()) builder.add_schema(schema_offset);
            top->Finish(builder.Finish());
          })
          .o);
}

Offset<Node> MergeNode(FlatBufferBuilder* fbb, const Layers& layers) {
  StringSet hostnames;
  StringSet tags;
  for (const Table* table : layers.tables) {
    const auto& node = *reinterpret_cast<const Node*>(table);
    Unite(&Node::hostnames, node, &hostnames);
    Unite(&Node::tags, node, &tags);
  }
  return Offset<Node>(
      MergeWithTop(fbb, "aos.Node", layers.tables, [&](FlatBufferBuilder* top) {
        const auto hostnames_offset = BuildStrings(top, hostnames);
        const auto tags_offset = BuildStrings(top, tags);
        NodeBuilder builder(*top);
        if (!hostnames_offset.IsNull()) builder.add_hostnames(hostnames_offset);
        if (!tags_offset.IsNull()) builder.add_tags(tags_offset);
        top->Finish(builder.Finish());
      }).o);
}

Offset<Application> MergeApplication(FlatBufferBuilder* fbb,
                                     const Layers& layers) {
  StringSet nodes;
  std::vector<const Map*> maps;
  bool any_maps = false;
  for (const Table* table : layers.tables) {
    const auto& application = *reinterpret_cast<const Application*>(table);
    Unite(&Application::nodes, application, &nodes);
    if (application.maps() == nullptr) continue;
    any_maps = true;
    for (const Map* map : *application.maps()) maps.push_back(map);
  }
  return Offset<Application>(
      MergeWithTop(fbb, "aos.Application", layers.tables,
                   [&](FlatBufferBuilder* top) {
                     std::vector<Offset<Map>> map_offsets;
                     for (const Map* map : maps) {
                       map_offsets.emplace_back(
                           CopyFlatbufferTable(top, ConfigurationSchema(),
                                               ObjectNamed("aos.Map"),
                                               *AsTable(map))
                               .o);
                     }
                     const auto maps_offset =
                         any_maps ? top->CreateVector(map_offsets)
                                  : Offset<flatbuffers::Vector<Offset<Map>>>(0);
                     const auto nodes_offset = BuildStrings(top, nodes);
                     ApplicationBuilder builder(*top);
                     if (!maps_offset.IsNull()) builder.add_maps(maps_offset);
                     if (!nodes_offset.IsNull())
                       builder.add_nodes(nodes_offset);
                     top->Finish(builder.Finish());
                   })
          .o);
}

}  // namespace

FlatbufferDetachedBuffer<Configuration> MergeConfigFiles(
    std::span<const ParsedConfigFile> files, const SchemasByType* schemas,
    ConfigSources* sources, std::vector<std::string>* missing_schema) {
  std::map<std::pair<std::string_view, std::string_view>, Layers> channels;
  std::vector<std::pair<const Map*, const std::string*>> maps;
  std::map<std::string_view, Layers> nodes;
  std::map<std::string_view, Layers> applications;
  const Configuration* storage_duration_from = nullptr;
  for (const ParsedConfigFile& file : files) {
    const Configuration* config = file.config();
    if (flatbuffers::IsFieldPresent(
            config, Configuration::VT_CHANNEL_STORAGE_DURATION)) {
      storage_duration_from = config;
    }
    if (config->channels() != nullptr) {
      for (const Channel* channel : *config->channels()) {
        channels[{StringView(channel->name()), StringView(channel->type())}]
            .Add(channel, file.path);
      }
    }
    if (config->maps() != nullptr) {
      for (const Map* map : *config->maps()) maps.emplace_back(map, &file.path);
    }
    if (config->nodes() != nullptr) {
      for (const Node* node : *config->nodes()) {
        nodes[StringView(node->name())].Add(node, file.path);
      }
    }
    if (config->applications() != nullptr) {
      for (const Application* application : *config->applications()) {
        applications[StringView(application->name())].Add(application,
                                                          file.path);
      }
    }
  }

  sources->root_file = files.empty() ? std::string() : files.back().path;
  FlatBufferBuilder fbb;
  std::vector<Offset<Channel>> channel_offsets;
  channel_offsets.reserve(channels.size());
  for (const auto& [key, layers] : channels) {
    const reflection::Schema* schema = nullptr;
    if (schemas != nullptr) {
      auto found = schemas->find(key.second);
      if (found == schemas->end()) {
        missing_schema->push_back(
            StrCat(StrJoin(layers.files, ", "), ": channel ",
                   Printable(key.first), " has type ", Printable(key.second),
                   ", but no schema given has it as root table"));
      } else {
        schema = found->second;
      }
    }
    channel_offsets.push_back(MergeChannel(&fbb, layers, schema));
    sources->channel_files.push_back(StrJoin(layers.files, ", "));
  }
  std::vector<Offset<Map>> map_offsets;
  map_offsets.reserve(maps.size());
  for (const auto& [map, path] : maps) {
    map_offsets.emplace_back(CopyFlatbufferTable(&fbb, ConfigurationSchema(),
                                                 ObjectNamed("aos.Map"),
                                                 *AsTable(map))
                                 .o);
    sources->map_files.push_back(*path);
  }
  std::vector<Offset<Node>> node_offsets;
  for (const auto& [name, layers] : nodes) {
    node_offsets.push_back(MergeNode(&fbb, layers));
    sources->node_files.push_back(StrJoin(layers.files, ", "));
  }
  std::vector<Offset<Application>> application_offsets;
  for (const auto& [name, layers] : applications) {
    application_offsets.push_back(MergeApplication(&fbb, layers));
    sources->application_files.push_back(StrJoin(layers.files, ", "));
  }

  const auto channels_vector = fbb.CreateVector(channel_offsets);
  const auto maps_vector = fbb.CreateVector(map_offsets);
  const auto nodes_vector = fbb.CreateVector(node_offsets);
  const auto applications_vector = fbb.CreateVector(application_offsets);
  ConfigurationBuilder builder(fbb);
  builder.add_channels(channels_vector);
  if (!map_offsets.empty()) builder.add_maps(maps_vector);
  if (!node_offsets.empty()) builder.add_nodes(nodes_vector);
  if (!application_offsets.empty()) {
    builder.add_applications(applications_vector);
  }
  if (storage_duration_from != nullptr) {
    fbb.ForceDefaults(true);
    builder.add_channel_storage_duration(
        storage_duration_from->channel_storage_duration());
    fbb.ForceDefaults(false);
  }
  fbb.Finish(builder.Finish());
  return FlatbufferDetachedBuffer<Configuration>(fbb.Release());
}

}  // namespace aos::configuration
