#include "aos/starter/application_spec.h"

#include <unistd.h>

#include "aos/configuration_maps.h"
#include "aos/util/str_cat.h"

namespace aos::starter {
namespace {

std::string FindBinary(std::string binary, const std::string& binary_dir) {
  if (binary.empty() || binary[0] == '/' || binary_dir.empty()) return binary;
  const std::string in_dir = StrCat(binary_dir, "/", binary);
  if (access(in_dir.c_str(), F_OK) == 0) return in_dir;
  return binary;
}

}  // namespace

bool ApplicationSpec::RunsDifferentlyFrom(const ApplicationSpec& other) const {
  return binary != other.binary || args != other.args || user != other.user ||
         memory_limit != other.memory_limit;
}

std::vector<ApplicationSpec> ApplicationsOf(const Configuration& config,
                                            const Node* node,
                                            const std::string& binary_dir) {
  std::vector<ApplicationSpec> specs;
  if (config.applications() == nullptr) return specs;
  for (const Application* application : *config.applications()) {
    if (application->name() == nullptr ||
        (node != nullptr && !configuration::ApplicationRunsOn(
                                *application, node->name()->string_view()))) {
      continue;
    }
    ApplicationSpec spec;
    spec.name = application->name()->str();
    spec.binary = FindBinary(application->executable_name() != nullptr
                                 ? application->executable_name()->str()
                                 : spec.name,
                             binary_dir);
    if (application->args() != nullptr) {
      for (const flatbuffers::String* arg : *application->args()) {
        spec.args.push_back(arg->str());
      }
    }
    spec.autostart = application->autostart();
    spec.autorestart = application->autorestart();
    spec.memory_limit = application->memory_limit();
    spec.stop_time = std::chrono::nanoseconds(application->stop_time());
    if (application->user() != nullptr && !application->user()->str().empty()) {
      spec.user = application->user()->str();
      absl::StatusOr<RunAs> run_as = ResolveUser(spec.user);
      if (!run_as.ok()) {
        spec.problem = std::string(run_as.status().message());
      } else if (run_as->uid != geteuid()) {
        spec.run_as = std::move(run_as).value();
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace aos::starter
