#include "aos/tools/streamer/application_liveness.h"

#include <cmath>

#include "aos/configuration_maps.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {
namespace {

// Whole seconds, for a person: "3 s".
std::string WholeSeconds(std::chrono::nanoseconds duration) {
  return StrCat(static_cast<int64_t>(std::floor(
                    std::chrono::duration<double>(duration).count())),
                " s");
}

}  // namespace

std::string ApplicationLiveness::Describe() const {
  std::string line =
      StrCat(name, node.empty() ? "" : StrCat(" on ", node), ": ",
             ever_reported ? "no report for " : "no report in ",
             WholeSeconds(silent_for));
  if (starter.has_value()) {
    StrAppend(&line, "; starter: ", starter->state, ", ", starter->restarts,
              starter->restarts == 1 ? " restart" : " restarts");
    if (!starter->message.empty()) {
      StrAppend(&line, " (", starter->message, ")");
    }
  } else {
    StrAppend(&line, "; no starter status");
  }
  return line;
}

std::string SilentLines(const std::vector<ApplicationLiveness>& applications) {
  std::string lines;
  for (const ApplicationLiveness& application : applications) {
    if (!application.up)
      StrAppend(&lines, "silent: ", application.Describe(), "\n");
  }
  return lines;
}

std::string LivenessJson(const std::vector<ApplicationLiveness>& applications) {
  JsonWriter json;
  json.BeginObject().Key("applications").BeginArray();
  for (const ApplicationLiveness& application : applications) {
    json.BeginObject();
    json.Key("node").String(application.node);
    json.Key("application").String(application.name);
    json.Key("up").Bool(application.up);
    json.Key("seconds_since_report");
    if (application.ever_reported) {
      json.Number(
          std::chrono::duration<double>(application.silent_for).count());
    } else {
      json.Null();
    }
    json.Key("starter");
    if (application.starter.has_value()) {
      json.BeginObject();
      json.Key("state").String(application.starter->state);
      json.Key("restarts").Number(application.starter->restarts);
      json.Key("message").String(application.starter->message);
      json.EndObject();
    } else {
      json.Null();
    }
    json.EndObject();
  }
  json.EndArray().EndObject();
  return json.Text();
}

LivenessWatch::LivenessWatch(const Configuration* config,
                             const StreamerOptions* options)
    : options_(options) {
  if (config->applications() == nullptr) return;
  std::vector<std::string> nodes;
  if (config->nodes() == nullptr || config->nodes()->size() == 0) {
    nodes.push_back("");
  } else {
    for (const Node* node : *config->nodes()) {
      nodes.push_back(node->name()->str());
    }
  }
  for (const Application* application : *config->applications()) {
    if (application->name() == nullptr) continue;
    const std::string name = application->name()->str();
    if (!options->applications.empty() &&
        !options->applications.contains(name)) {
      continue;
    }
    for (const std::string& node : nodes) {
      if (!options->flags.node.empty() && node != options->flags.node) {
        continue;
      }
      if (!node.empty() &&
          !configuration::ApplicationRunsOn(*application, node)) {
        continue;
      }
      index_.emplace(std::pair(node, name), watched_.size());
      watched_.push_back({.node = node,
                          .name = name,
                          .last_report = std::nullopt,
                          .starter = std::nullopt});
    }
  }
}

void LivenessWatch::OnReport(const std::string& node, const std::string& name,
                             monotonic_clock::time_point at) {
  auto it = index_.find(std::pair(node, name));
  if (it != index_.end()) watched_[it->second].last_report = at;
  Observe(at);
}

void LivenessWatch::OnStarterStatus(const std::string& node,
                                    const starter::Status& status,
                                    monotonic_clock::time_point at) {
  if (status.statuses() != nullptr) {
    for (const starter::ApplicationStatus* application : *status.statuses()) {
      if (application->name() == nullptr) continue;
      auto it = index_.find(std::pair(node, application->name()->str()));
      if (it == index_.end()) continue;
      watched_[it->second].starter =
          StarterSays{.state = starter::EnumNameState(application->state()),
                      .restarts = application->restarts(),
                      .message = application->message() == nullptr
                                     ? ""
                                     : application->message()->str()};
    }
  }
  Observe(at);
}

void LivenessWatch::Observe(monotonic_clock::time_point now) {
  if (!began_.has_value()) {
    began_ = now;
    next_show_ = now + std::chrono::seconds(1);
  }
  now_ = std::max(now_, now);
}

bool LivenessWatch::Advance(monotonic_clock::time_point now) {
  Observe(now);
  if (now_ < next_show_) return false;
  next_show_ = now_ + std::chrono::seconds(1);
  return !watched_.empty();
}

std::vector<ApplicationLiveness> LivenessWatch::Applications() const {
  const std::chrono::nanoseconds silent_after =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(options_->flags.silent_after_s));
  std::vector<ApplicationLiveness> all;
  for (const Watched& watched : watched_) {
    ApplicationLiveness liveness{
        .node = watched.node,
        .name = watched.name,
        .up = false,
        .silent_for = {},
        .ever_reported = watched.last_report.has_value(),
        .starter = watched.starter};
    const monotonic_clock::time_point since =
        watched.last_report.value_or(began_.value_or(now_));
    liveness.silent_for = std::max(std::chrono::nanoseconds(0), now_ - since);
    liveness.up =
        watched.last_report.has_value() && liveness.silent_for < silent_after;
    all.push_back(std::move(liveness));
  }
  return all;
}

}  // namespace aos::streamer
