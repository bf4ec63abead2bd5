// Reading and flattening configurations: imports, merging, schemas.
#include "aos/configuration.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "aos/configuration_bfbs_generated.h"
#include "aos/configuration_file.h"
#include "aos/configuration_merge.h"
#include "aos/configuration_validation.h"
#include "aos/flatbuffer_merge.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::configuration {
namespace {

namespace fs = std::filesystem;
using flatbuffers::FlatBufferBuilder;

// A path, or a list of them, as messages show it: escaped and bounded
// (a config can import a path of a megabyte).
std::string Shown(std::string_view path) {
  return InlinePrintable(path, kPrintablePathMaxBytes);
}

// One parsed config file (named as messages show it), or the error naming
// it.
absl::StatusOr<ParsedConfigFile> ParseConfigJson(std::string_view json,
                                                 std::string_view path) {
  const std::string shown = Shown(path);
  absl::StatusOr<flatbuffers::DetachedBuffer> buffer =
      JsonToFlatbuffer(json, ConfigurationSchema(), {.source_name = shown});
  if (!buffer.ok()) return buffer.status();
  return ParsedConfigFile{shown, std::move(*buffer)};
}

// Loads a file and, depth first, everything it imports; each file once
// (a second import of a file is an error, as in AOS).
class ImportLoader {
 public:
  explicit ImportLoader(int64_t max_file_bytes)
      : max_file_bytes_(max_file_bytes) {}

  // Appends `path` and its imports to files(), imports first.
  absl::Status Load(const std::string& path, const std::string& importer) {
    std::error_code error;
    const fs::path identity = fs::weakly_canonical(fs::path(path), error);
    const std::string key = error ? path : identity.string();
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i].first == key) {
        std::vector<std::string> cycle;
        for (size_t j = i; j < stack_.size(); ++j)
          cycle.push_back(Shown(stack_[j].second));
        cycle.push_back(Shown(path));
        return absl::InvalidArgumentError(StrCat(
            Shown(importer), ": import cycle: ", StrJoin(cycle, " imports ")));
      }
    }
    // As in AOS, each file is imported once: a second import would merge
    // its definitions again, over what came between.
    if (auto first = loaded_.find(key); first != loaded_.end()) {
      return absl::InvalidArgumentError(
          StrCat(Shown(importer), ": imports ", Shown(path), ", which ",
                 Shown(first->second),
                 " already imported; import each file in one place"));
    }
    absl::StatusOr<std::string> json =
        ReadConfigFileBytes(path, max_file_bytes_);
    if (!json.ok()) {
      if (importer.empty()) return json.status();
      if (absl::IsNotFound(json.status())) {
        return absl::NotFoundError(StrCat(Shown(importer), ": imported file ",
                                          Shown(path), " does not exist"));
      }
      return absl::Status(
          json.status().code(),
          StrCat(Shown(importer), ": import ", json.status().message()));
    }
    absl::StatusOr<ParsedConfigFile> file = ParseConfigJson(*json, path);
    if (!file.ok()) return file.status();
    if (absl::Status status = ValidateConfigFile(*file->config(), file->path);
        !status.ok()) {
      return status;
    }

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
    loaded_.emplace(key, importer);
    files_.push_back(std::move(*file));
    return absl::OkStatus();
  }

  std::vector<ParsedConfigFile>& files() { return files_; }

 private:
  const int64_t max_file_bytes_;
  // (identity, path as shown) of the files being loaded, outermost first.
  std::vector<std::pair<std::string, std::string>> stack_;
  // Identity of each file loaded -> the file that imported it.
  std::map<std::string, std::string> loaded_;
  std::vector<ParsedConfigFile> files_;
};

// The reflection schemas available for embedding, by root table name.
struct SchemaLibrary {
  std::vector<std::string> paths;
  std::vector<std::string> bytes;
  SchemasByType by_type;
};

absl::StatusOr<SchemaLibrary> LoadSchemas(const std::vector<std::string>& paths,
                                          int64_t max_file_bytes) {
  SchemaLibrary library;
  library.paths = paths;
  library.bytes.reserve(paths.size());
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> bytes =
        ReadConfigFileBytes(path, max_file_bytes);
    if (!bytes.ok()) return bytes.status();
    flatbuffers::Verifier verifier(
        reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    if (!reflection::VerifySchemaBuffer(verifier)) {
      return absl::InvalidArgumentError(StrCat(
          Shown(path),
          ": not a binary flatbuffer schema (.bfbs from flatc --schema)"));
    }
    library.bytes.push_back(std::move(*bytes));
    const reflection::Schema* schema =
        reflection::GetSchema(library.bytes.back().data());
    if (schema->root_table() == nullptr) {
      return absl::InvalidArgumentError(
          StrCat(Shown(path),
                 ": schema has no root_type, so it cannot describe a channel"));
    }
    library.by_type.emplace(schema->root_table()->name()->str(), schema);
  }
  return library;
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> Flatten(
    const std::vector<ParsedConfigFile>& files,
    const ReadConfigOptions& options) {
  std::optional<SchemaLibrary> schemas;
  if (options.embed_schemas) {
    absl::StatusOr<SchemaLibrary> loaded =
        LoadSchemas(options.schema_paths, options.max_file_bytes);
    if (!loaded.ok()) return loaded.status();
    schemas = std::move(*loaded);
  }
  ConfigSources sources;
  std::vector<std::string> missing_schema;
  FlatbufferDetachedBuffer<Configuration> merged = MergeConfigFiles(
      files, schemas ? &schemas->by_type : nullptr, &sources, &missing_schema);
  if (absl::Status status = ValidateConfiguration(merged.message(), sources);
      !status.ok()) {
    return status;
  }
  if (!missing_schema.empty()) {
    return absl::InvalidArgumentError(StrCat(
        StrJoin(missing_schema, "\n"), "\n(schemas given: ",
        schemas->paths.empty() ? "none" : Shown(StrJoin(schemas->paths, ", ")),
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
      {.multi_line = multi_line,
       .strict_json = strict_json,
       .non_finite_as_strings = true});
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfig(
    std::string_view path, const ReadConfigOptions& options) {
  const std::string path_string(path);
  if (path.ends_with(".bfbs")) {
    absl::StatusOr<std::string> bytes =
        ReadConfigFileBytes(path_string, options.max_file_bytes);
    if (!bytes.ok()) return bytes.status();
    flatbuffers::Verifier verifier(
        reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    if (!verifier.VerifyBuffer<Configuration>(nullptr)) {
      return absl::InvalidArgumentError(
          StrCat(Shown(path),
                 ": not a binary aos.Configuration (corrupt, or written by "
                 "another version)"));
    }
    ParsedConfigFile file{Shown(path), flatbuffers::DetachedBuffer()};
    FlatBufferBuilder fbb;
    fbb.Finish(CopyFlatbufferTable(
        &fbb, ConfigurationSchema(), *ConfigurationSchema().root_table(),
        *flatbuffers::GetAnyRoot(
            reinterpret_cast<const uint8_t*>(bytes->data()))));
    file.buffer = fbb.Release();
    std::vector<ParsedConfigFile> files;
    files.push_back(std::move(file));
    return Flatten(files, options);
  }
  ImportLoader loader(options.max_file_bytes);
  if (absl::Status status = loader.Load(path_string, ""); !status.ok()) {
    return status;
  }
  return Flatten(loader.files(), options);
}

absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> ReadConfigFromJson(
    std::string_view json, std::string_view source_name) {
  absl::StatusOr<ParsedConfigFile> file = ParseConfigJson(json, source_name);
  if (!file.ok()) return file.status();
  if (absl::Status status = ValidateConfigFile(*file->config(), file->path);
      !status.ok()) {
    return status;
  }
  if (file->config()->imports() != nullptr &&
      file->config()->imports()->size() > 0) {
    return absl::InvalidArgumentError(StrCat(
        file->path, ": imports need a file to be relative to; use ReadConfig"));
  }
  std::vector<ParsedConfigFile> files;
  files.push_back(std::move(*file));
  return Flatten(files, {});
}

}  // namespace aos::configuration
