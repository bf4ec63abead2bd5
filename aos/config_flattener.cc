// Flattens a configuration for the aos_config Bazel macro (aos/config.bzl):
// resolves imports, merges, validates, embeds schemas, and writes the result
// as JSON and as a binary aos.Configuration.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "aos/config_flag.h"
#include "aos/configuration.h"
#include "aos/init.h"
#include "gflags/gflags.h"

DEFINE_string(out_json, "", "Where to write the flattened config as JSON.");
DEFINE_int64(max_file_bytes, aos::configuration::kDefaultMaxConfigFileBytes,
             "Refuse a config, import or schema file larger than this.");
DEFINE_string(out_bfbs, "",
              "Where to write the flattened config as a binary "
              "aos.Configuration flatbuffer.");

namespace {

bool WriteFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), contents.size());
  out.close();
  if (!out) {
    std::cerr << "config_flattener: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: config_flattener --config=FILE --out_json=OUT.json "
      "--out_bfbs=OUT.bfbs [SCHEMA.bfbs | OTHER_INPUT]...\n"
      "Flattens FILE with every .bfbs argument as a schema source; other\n"
      "arguments (the imported JSON files) are ignored. Run by aos_config.");
  if (FLAGS_config.empty() || FLAGS_out_json.empty() ||
      FLAGS_out_bfbs.empty()) {
    std::cerr << "config_flattener: --config, --out_json and --out_bfbs are "
                 "all required (see --help)\n";
    return 2;
  }
  aos::configuration::ReadConfigOptions options;
  options.embed_schemas = true;
  options.max_file_bytes = FLAGS_max_file_bytes;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).ends_with(".bfbs"))
      options.schema_paths.push_back(argv[i]);
  }
  auto config = aos::configuration::ReadConfig(FLAGS_config, options);
  if (!config.ok()) {
    std::cerr << "aos_config: " << config.status().message() << "\n";
    return 1;
  }
  const std::span<const uint8_t> bytes = config->span();
  // Strict JSON, like everything we print: NaN defaults of the embedded
  // schemas are the strings "nan", which flatbuffers reads back as NaN.
  if (!WriteFile(FLAGS_out_json, aos::configuration::ConfigurationToJson(
                                     config->message(), true,
                                     /*strict_json=*/true) +
                                     "\n") ||
      !WriteFile(FLAGS_out_bfbs,
                 std::string_view(reinterpret_cast<const char*>(bytes.data()),
                                  bytes.size()))) {
    return 1;
  }
  return 0;
}
