#ifndef AOS_STARTER_APPLICATION_SPEC_H_
#define AOS_STARTER_APPLICATION_SPEC_H_

// What a node's starter runs: the `applications` of a configuration that
// belong to one node, with their binaries found and their users checked.
//
//   std::vector<ApplicationSpec> specs =
//       ApplicationsOf(config.message(), node, "/home/robot/bin");
//   for (const ApplicationSpec& spec : specs) {
//     if (!spec.problem.empty()) LOG(ERROR) << spec.name << ": " << ...;
//   }

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/starter/spawn.h"

namespace aos::starter {

struct ApplicationSpec {
  std::string name;
  // The program to run (see ApplicationsOf), and its arguments.
  std::string binary;
  std::vector<std::string> args;
  // Empty: the starter's own user.
  std::string user;
  // `user` resolved; empty when it is the starter's own or does not exist.
  std::optional<RunAs> run_as;
  bool autostart = true;
  bool autorestart = true;
  // Bytes of memory it may use; 0 is no limit.
  uint64_t memory_limit = 0;
  // How long it has after SIGTERM before SIGKILL.
  std::chrono::nanoseconds stop_time = std::chrono::seconds(1);
  // Why it cannot be started (a user that does not exist), or empty.
  std::string problem;

  // Whether running `other` instead needs a restart (any field that reaches
  // the process differs).
  bool RunsDifferentlyFrom(const ApplicationSpec& other) const;
};

// The applications of `config` that run on `node` (those that list it, and
// those that list no nodes; every one in a single-node config), in the
// config's order (sorted by name). An application's binary is its
// executable_name, or its name: an absolute path is kept, a relative one is
// taken from `binary_dir` when a file is there, and a bare name not there
// is looked up in $PATH when started.
std::vector<ApplicationSpec> ApplicationsOf(const Configuration& config,
                                            const Node* node,
                                            const std::string& binary_dir);

}  // namespace aos::starter

#endif  // AOS_STARTER_APPLICATION_SPEC_H_
