#ifndef AOS_CONFIGURATION_VALIDATION_H_
#define AOS_CONFIGURATION_VALIDATION_H_

// Validation of a merged configuration, with messages that name the file(s)
// each culprit came from. Used by ReadConfig; see aos/configuration.h for the
// list of checks.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"

namespace aos::configuration {

// Where each entry of a merged configuration came from, index for index.
struct ConfigSources {
  // The file named when the culprit is the configuration as a whole.
  std::string root_file;
  // Files that defined (or redefined) each channel, e.g. "a.json, b.json".
  std::vector<std::string> channel_files;
  std::vector<std::string> node_files;
  std::vector<std::string> map_files;
  std::vector<std::string> application_files;
};

// The checks AOS makes on each file before merging it (`path` names it):
// every channel has a name and a type, a valid name, no node twice in
// logger_nodes or a connection's timestamp_logger_nodes (merging would hide
// it), and no delivery timestamps logged for a channel that is not logged.
// Returns the first problem (InvalidArgument) or OK. Cost: linear.
absl::Status ValidateConfigFile(const Configuration& config,
                                std::string_view path);

// Checks a merged configuration, everything but schemas; returns the first
// problem (InvalidArgument) or OK. docs/configuration.md lists the checks.
// Cost: near-linear in the size of the config (see
// aos/configuration_map_loops.h for maps).
absl::Status ValidateConfiguration(const Configuration& config,
                                   const ConfigSources& sources);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_VALIDATION_H_
