#ifndef AOS_CONFIGURATION_VALIDATION_H_
#define AOS_CONFIGURATION_VALIDATION_H_

// Validation of a merged configuration, with messages that name the file(s)
// each culprit came from. Used by ReadConfig; see aos/configuration.h for the
// list of checks.

#include <string>
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

// Checks everything but schemas; returns the first problem (InvalidArgument)
// or OK.
absl::Status ValidateConfiguration(const Configuration& config,
                                   const ConfigSources& sources);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_VALIDATION_H_
