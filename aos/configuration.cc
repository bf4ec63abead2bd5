// Reading and flattening configurations: imports, merging, schemas.
#include "aos/configuration.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "aos/configuration_bfbs_generated.h"
#include "aos/configuration_validation.h"
#include "aos/flatbuffer_merge.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::configuration {
namespace {

namespace fs = std::filesystem;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Table;

std::string_view View(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        StrCat(path, ": cannot read: ", std::strerror(errno)));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

const reflection::Object& ObjectNamed(std::string_view name) {
  const reflection::Object* object =
      ConfigurationSchema().objects()->LookupByKey(std::string(name).c_str());
  CHECK(object != nullptr) << "aos/configuration.fbs has no " << name;
  return *object;
}

// One parsed config file.
struct ConfigFile {
  std::string path;  // As shown to the user.
  flatbuffers::DetachedBuffer buffer;
  const Configuration* config() const {
    return flatbuffers::GetRoot<Configuration>(buffer.data());
  }
};

absl::StatusOr<ConfigFile> ParseConfigJson(std::string_view json,
                                           const std::string& display_path) {
  absl::StatusOr<flatbuffers::DetachedBuffer> buffer = JsonToFlatbuffer(
      json, ConfigurationSchema(), {.source_name = display_path});
  if (!buffer.ok()) return buffer.status();
  return ConfigFile{display_path, std::move(*buffer)};
}

// Loads a file and, depth first, everything it imports; each file once.
class ImportLoader {
 public:
  // Appends `path` and its imports to files(), imports first.
  absl::Status Load(const std::string& path, const std::string& importer) {
    std::error_code error;
    const fs::path identity = fs::weakly_canonical(fs::path(path), error);
    const std::string key = error ? path : identity.string();
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i].first == key) {
        std::vector<std::string> cycle;
        for (size_t j = i; j < stack_.size(); ++j)
          cycle.push_back(stack_[j].second);
        cycle.push_back(path);
        return absl::InvalidArgumentError(
            StrCat(importer, ": import cycle: ", StrJoin(cycle, " imports ")));
      }
    }
    if (loaded_.contains(key)) return absl::OkStatus();
    if (!fs::exists(path)) {
      if (importer.empty()) {
        return absl::NotFoundError(StrCat(path, ": no such file"));
      }
      return absl::NotFoundError(
          StrCat(importer, ": imported file ", path, " does not exist"));
    }
    absl::StatusOr<std::string> json = ReadFile(path);
    if (!json.ok()) return json.status();
    absl::StatusOr<ConfigFile> file = ParseConfigJson(*json, path);
    if (!file.ok()) return file.status();

    stack_.emplace_back(key, path);
    const Configuration* config = file->config();
    if (config->imports() != nullptr) {
      const fs::path directory = fs::path(path).parent_path();
      for (const flatbuffers::String* import : *config->imports()) {
        const std::string import_path =
            (directory / import->str()).lexically_normal().string();
        if (absl::Status status = Load(import_path, path); !status.ok()) {
          return status;
        }
      }
    }
    stack_.pop_back();
    loaded_.insert(key);
    files_.push_back(std::move(*file));
    return absl::OkStatus();
  }

  std::vector<ConfigFile>& files() { return files_; }

 private:
  // (identity, path as shown) of the files being loaded, outermost first.
  std::vector<std::pair<std::string, std::string>> stack_;
  std::set<std::string> loaded_;
  std::vector<ConfigFile> files_;
};

// The reflection schemas available for embedding, by root table name.
struct SchemaLibrary {
  std::vector<std::string> paths;
  std::vector<std::string> bytes;
  std::map<std::string, const reflection::Schema*, std::less<>> by_type;
};

absl::StatusOr<SchemaLibrary> LoadSchemas(
    const std::vector<std::string>& paths) {
  SchemaLibrary library;
  library.paths = paths;
  library.bytes.reserve(paths.size());
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> bytes = ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    flatbuffers::Verifier verifier(
        reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    if (!reflection::VerifySchemaBuffer(verifier)) {
      return absl::InvalidArgumentError(StrCat(
          path,
          ": not a binary flatbuffer schema (.bfbs from flatc --schema)"));
    }
    library.bytes.push_back(std::move(*bytes));
    const reflection::Schema* schema =
        reflection::GetSchema(library.bytes.back().data());
    if (schema->root_table() == nullptr) {
      return absl::InvalidArgumentError(StrCat(
          path, ": schema has no root_type, so it cannot describe a channel"));
    }
    library.by_type.emplace(schema->root_table()->name()->str(), schema);
  }
  return library;
}

// Merges the files (in order) into one configuration, sorting channels and
// recording where everything came from.
FlatbufferDetachedBuffer<Configuration> Merge(
    const std::vector<ConfigFile>& files, const SchemaLibrary* schemas,
    ConfigSources* sources, std::vector<std::string>* missing_schema) {
  const reflection::Schema& schema = ConfigurationSchema();
  struct Layers {
    std::vector<const Table*> tables;
    std::vector<std::string> files;
  };
  std::map<std::pair<std::string, std::string>, Layers> channels;
  std::vector<std::pair<const Map*, std::string>> maps;
  std::vector<std::pair<const Node*, std::string>> nodes;
  std::map<std::string, size_t> application_index;
  std::vector<Layers> applications;
  std::vector<const Table*> top_level;
  for (const ConfigFile& file : files) {
    const Configuration* config = file.config();
    top_level.push_back(reinterpret_cast<const Table*>(config));
    if (config->channels() != nullptr) {
      for (const Channel* channel : *config->channels()) {
        Layers& layers = channels[{std::string(View(channel->name())),
                                   std::string(View(channel->type()))}];
        layers.tables.push_back(reinterpret_cast<const Table*>(channel));
        if (layers.files.empty() || layers.files.back() != file.path) {
          layers.files.push_back(file.path);
        }
      }
    }
    if (config->maps() != nullptr) {
      for (const Map* map : *config->maps()) maps.emplace_back(map, file.path);
    }
    if (config->nodes() != nullptr) {
      for (const Node* node : *config->nodes())
        nodes.emplace_back(node, file.path);
    }
    if (config->applications() != nullptr) {
      for (const Application* application : *config->applications()) {
        auto [it, inserted] = application_index.emplace(
            std::string(View(application->name())), applications.size());
        if (inserted) applications.emplace_back();
        applications[it->second].tables.push_back(
            reinterpret_cast<const Table*>(application));
        applications[it->second].files.push_back(file.path);
      }
    }
  }

  sources->root_file = files.empty() ? std::string() : files.back().path;
  FlatBufferBuilder fbb;
  std::vector<Offset<Channel>> channel_offsets;
  for (const auto& [key, layers] : channels) {
    std::vector<const Table*> tables = layers.tables;
    // The schema, when wanted, goes on top as one more layer.
    FlatBufferBuilder schema_fbb;
    if (schemas != nullptr) {
      auto found = schemas->by_type.find(key.second);
      if (found == schemas->by_type.end()) {
        missing_schema->push_back(
            StrCat(StrJoin(layers.files, ", "), ": channel \"", key.first,
                   "\" has type \"", key.second,
                   "\", but no schema given has it as root table"));
      } else {
        // aos/configuration.fbs includes reflection.fbs, so its own schema
        // describes reflection.Schema too.
        const auto schema_offset = CopyFlatbufferTable(
            &schema_fbb, schema, ObjectNamed("reflection.Schema"),
            *reinterpret_cast<const Table*>(found->second));
        ChannelBuilder builder(schema_fbb);
        builder.add_schema(Offset<reflection::Schema>(schema_offset.o));
        schema_fbb.Finish(builder.Finish());
        tables.push_back(
            flatbuffers::GetAnyRoot(schema_fbb.GetBufferPointer()));
      }
    }
    channel_offsets.emplace_back(
        MergeFlatbufferTables(&fbb, schema, ObjectNamed("aos.Channel"), tables)
            .o);
    sources->channel_files.push_back(StrJoin(layers.files, ", "));
  }
  std::vector<Offset<Map>> map_offsets;
  for (const auto& [map, path] : maps) {
    map_offsets.emplace_back(
        CopyFlatbufferTable(&fbb, schema, ObjectNamed("aos.Map"),
                            *reinterpret_cast<const Table*>(map))
            .o);
    sources->map_files.push_back(path);
  }
  std::vector<Offset<Node>> node_offsets;
  for (const auto& [node, path] : nodes) {
    node_offsets.emplace_back(
        CopyFlatbufferTable(&fbb, schema, ObjectNamed("aos.Node"),
                            *reinterpret_cast<const Table*>(node))
            .o);
    sources->node_files.push_back(path);
  }
  std::vector<Offset<Application>> application_offsets;
  for (const Layers& layers : applications) {
    application_offsets.emplace_back(
        MergeFlatbufferTables(&fbb, schema, ObjectNamed("aos.Application"),
                              layers.tables)
            .o);
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
  if (!application_offsets.empty())
    builder.add_applications(applications_vector);
  // Later files win for the top-level default too: the last file that sets
  // it (files are in merge order, imports first).
  for (auto it = top_level.rbegin(); it != top_level.rend(); ++it) {
    const auto* config = reinterpret_cast<const Configuration*>(*it);
    if (flatbuffers::IsFieldPresent(
            config, Configuration::VT_CHANNEL_STORAGE_DURATION)) {
      builder.fbb_.ForceDefaults(true);
      builder.add_channel_storage_duration(config->channel_storage_duration());
      builder.fbb_.ForceDefaults(false);
      break;
    }
  }
  fbb.Finish(builder.Finish());
  return FlatbufferDetachedBuffer<Configuration>(fbb.Release());
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> Flatten(
    const std::vector<ConfigFile>& files, const ReadConfigOptions& options) {
  std::optional<SchemaLibrary> schemas;
  if (options.embed_schemas) {
    absl::StatusOr<SchemaLibrary> loaded = LoadSchemas(options.schema_paths);
    if (!loaded.ok()) return loaded.status();
    schemas = std::move(*loaded);
  }
  ConfigSources sources;
  std::vector<std::string> missing_schema;
  FlatbufferDetachedBuffer<Configuration> merged =
      Merge(files, schemas ? &*schemas : nullptr, &sources, &missing_schema);
  if (absl::Status status = ValidateConfiguration(merged.message(), sources);
      !status.ok()) {
    return status;
  }
  if (!missing_schema.empty()) {
    return absl::InvalidArgumentError(StrCat(
        StrJoin(missing_schema, "\n"), "\n(schemas given: ",
        schemas->paths.empty() ? "none" : StrJoin(schemas->paths, ", "),
        "; add the type's flatbuffer_cc_library to aos_config's flatbuffers)"));
  }
  return merged;
}

}  // namespace

const reflection::Schema& ConfigurationSchema() {
  static const reflection::Schema* const schema =
      reflection::GetSchema(ConfigurationBinarySchema::data());
  return *schema;
}

std::string ConfigurationToJson(const Configuration& config, bool multi_line,
                                bool strict_json) {
  return TableFlatbufferToJson(
      reinterpret_cast<const flatbuffers::Table*>(&config),
      ConfigurationSchema(), *ConfigurationSchema().root_table(),
      {.multi_line = multi_line, .strict_json = strict_json});
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfig(
    std::string_view path, const ReadConfigOptions& options) {
  const std::string path_string(path);
  if (path.ends_with(".bfbs")) {
    absl::StatusOr<std::string> bytes = ReadFile(path_string);
    if (!bytes.ok()) return bytes.status();
    flatbuffers::Verifier verifier(
        reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    if (!verifier.VerifyBuffer<Configuration>(nullptr)) {
      return absl::InvalidArgumentError(
          StrCat(path,
                 ": not a binary aos.Configuration (corrupt, or written by "
                 "another version)"));
    }
    ConfigFile file{path_string, flatbuffers::DetachedBuffer()};
    FlatBufferBuilder fbb;
    fbb.Finish(CopyFlatbufferTable(
        &fbb, ConfigurationSchema(), *ConfigurationSchema().root_table(),
        *flatbuffers::GetAnyRoot(
            reinterpret_cast<const uint8_t*>(bytes->data()))));
    file.buffer = fbb.Release();
    std::vector<ConfigFile> files;
    files.push_back(std::move(file));
    return Flatten(files, options);
  }
  ImportLoader loader;
  if (absl::Status status = loader.Load(path_string, ""); !status.ok()) {
    return status;
  }
  return Flatten(loader.files(), options);
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFromJson(
    std::string_view json, std::string_view source_name) {
  absl::StatusOr<ConfigFile> file =
      ParseConfigJson(json, std::string(source_name));
  if (!file.ok()) return file.status();
  if (file->config()->imports() != nullptr &&
      file->config()->imports()->size() > 0) {
    return absl::InvalidArgumentError(
        StrCat(source_name,
               ": imports need a file to be relative to; use ReadConfig"));
  }
  std::vector<ConfigFile> files;
  files.push_back(std::move(*file));
  return Flatten(files, {});
}

}  // namespace aos::configuration
