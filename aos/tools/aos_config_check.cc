// aos_config_check: reads a configuration, resolves its imports, merges and
// validates it (everything but schemas), and prints it flattened.
#include <iostream>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "aos/config_flag.h"
#include "aos/configuration.h"
#include "aos/init.h"
#include "aos/tools/node_summary.h"
#include "aos/util/printable.h"
#include "gflags/gflags.h"

DEFINE_string(
    schemas, "",
    "Comma-separated binary schemas (.bfbs); when given, every "
    "channel's type must have one and they are embedded in the output.");
DEFINE_bool(multi_line, true, "Print one field per line.");
DEFINE_string(node, "",
              "Instead of the config, print what this node of a multi-node "
              "config sends (and to whom), receives and runs.");
DEFINE_int64(max_file_bytes, aos::configuration::kDefaultMaxConfigFileBytes,
             "Refuse a config, import or schema file larger than this.");

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_config_check --config=FILE [--schemas=A.bfbs,B.bfbs] "
      "[--node=NAME]\n"
      "Reads FILE, resolves imports, merges and validates it, and prints the\n"
      "flattened config as JSON on stdout. On a problem, prints what and "
      "where\n"
      "on stderr and exits 1. See docs/configuration.md.");
  if (FLAGS_config.empty()) {
    std::cerr << "aos_config_check: --config=FILE is required (see --help)\n";
    return 1;
  }
  if (argc > 1) {
    std::cerr << "aos_config_check: unexpected argument '"
              << aos::InlinePrintable(argv[1])
              << "' (flags are --config, --schemas, --multi_line, "
                 "--max_file_bytes, --node)\n";
    return 1;
  }
  aos::configuration::ReadConfigOptions options;
  options.max_file_bytes = FLAGS_max_file_bytes;
  if (!FLAGS_schemas.empty()) {
    options.embed_schemas = true;
    options.schema_paths =
        absl::StrSplit(FLAGS_schemas, ',', absl::SkipEmpty());
  }
  auto config = aos::configuration::ReadConfig(FLAGS_config, options);
  if (!config.ok()) {
    std::cerr << "aos_config_check: " << config.status().message() << "\n";
    return 1;
  }
  if (!FLAGS_node.empty()) {
    const aos::Node* node =
        aos::configuration::GetNode(config->message(), FLAGS_node);
    if (node == nullptr) {
      // Names from the config and the flags, escaped and bounded.
      constexpr size_t kMaxListed = 20;
      std::vector<std::string> names;
      size_t nodes = 0;
      if (config->message().nodes() != nullptr) {
        nodes = config->message().nodes()->size();
        for (const aos::Node* n : *config->message().nodes()) {
          if (names.size() == kMaxListed) break;
          names.push_back(aos::InlinePrintable(n->name()->string_view()));
        }
      }
      std::string listed = absl::StrJoin(names, ", ");
      if (nodes > names.size()) {
        listed += " and " + std::to_string(nodes - names.size()) + " more";
      }
      std::cerr << "aos_config_check: --node="
                << aos::InlinePrintable(FLAGS_node) << " is not a node of "
                << aos::InlinePrintable(FLAGS_config,
                                        aos::kPrintablePathMaxBytes)
                << " ("
                << (names.empty() ? std::string("it has no nodes")
                                  : "its nodes: " + listed)
                << ")\n";
      return 1;
    }
    std::cout << aos::DescribeNode(config->message(), *node);
    return 0;
  }
  std::cout << aos::configuration::ConfigurationToJson(config->message(),
                                                       FLAGS_multi_line)
            << "\n";
  return 0;
}
