// How reading a configuration scales: generated configs of 10, 100, 1000
// and 10,000 channels, maps and nodes (split over imports, with
// applications, node-specific and chained maps, forwarded channels) are read
// with ReadConfig (load, merge, map-loop check, validation), and the time
// per element is printed with its ratio to the smallest config's: flat
// means linear. Then the goal case (10,000 channels with 1,000 maps, under
// 1 s) and long renaming-map chains seen by many applications and nodes.
//
//   bazel run -c opt //tools/bench:config_scale_benchmark
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "aos/configuration.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_double(min_seconds, 0.3,
              "Repeat each load until this much time has passed (at least 3 "
              "times) and report the fastest.");

namespace aos {
namespace {

struct Shape {
  std::string label;
  int channels = 0;
  int nodes = 0;
  // Maps renaming "/aos*" on one node each (AOS's usual pattern).
  int node_maps = 0;
  // Maps in chains: /gG/s0 -> /gG/s1 -> ... of chain_length.
  int chain_maps = 0;
  int chain_length = 50;
  int applications = 0;
};

// Keeps lookups from being optimized away.
size_t benchmark_sink = 0;

struct Generated {
  std::string main;
  size_t bytes = 0;
  int elements = 0;
};

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path);
  out << contents;
  if (!out) ExitForUserError(StrCat("cannot write ", path));
}

// Writes the config of `shape` into `directory` as a main file importing
// nodes, channels and maps files.
Generated Generate(const Shape& shape, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    ExitForUserError(StrCat("cannot make ", directory, ": ", error.message()));
  }
  std::string nodes = R"({ "nodes": [)";
  for (int i = 0; i < shape.nodes; ++i) {
    StrAppend(&nodes, i == 0 ? "\n" : ",\n", R"(  { "name": "n)", i,
              R"(", "hostname": "host)", i, R"(", "tags": [ "t)", i % 4,
              R"(" ] })");
  }
  nodes += "\n] }\n";
  std::string channels = R"({ "channels": [)";
  for (int i = 0; i < shape.channels; ++i) {
    const int source = shape.nodes == 0 ? 0 : i % shape.nodes;
    StrAppend(&channels, i == 0 ? "\n" : ",\n", R"(  { "name": "/n)", source,
              "/c", i, R"(", "type": "aos.bench.T)", i % 10,
              R"(", "max_size": )", 8 + i % 100, R"(, "frequency": 10)");
    if (shape.nodes > 0) {
      StrAppend(&channels, R"(, "source_node": "n)", source, R"(")");
      if (shape.nodes > 1 && i % 2 == 0) {
        StrAppend(&channels, R"(, "destination_nodes": [ { "name": "n)",
                  (source + 1) % shape.nodes, R"(", "priority": 3 } ])");
      }
    }
    channels += " }";
  }
  channels += "\n] }\n";
  std::string maps = R"({ "maps": [)";
  bool first = true;
  auto add_map = [&](std::string map) {
    StrAppend(&maps, first ? "\n  " : ",\n  ", map);
    first = false;
  };
  for (int i = 0; i < shape.node_maps; ++i) {
    add_map(StrCat(R"({ "match": { "name": "/aos*", "source_node": "n)", i,
                   R"(" }, "rename": { "name": "/n)", i, R"(/aos" } })"));
  }
  for (int i = 0; i < shape.chain_maps; ++i) {
    const int group = i / shape.chain_length;
    const int step = i % shape.chain_length;
    add_map(StrCat(R"({ "match": { "name": "/g)", group, "/s", step,
                   R"(" }, "rename": { "name": "/g)", group, "/s", step + 1,
                   R"(" } })"));
  }
  maps += "\n],\n  \"applications\": [";
  for (int i = 0; i < shape.applications; ++i) {
    StrAppend(&maps, i == 0 ? "\n" : ",\n", R"(  { "name": "app)", i, R"(")");
    if (shape.nodes > 0) {
      StrAppend(&maps, R"(, "nodes": [ "n)", i % shape.nodes, R"(" ])");
    }
    StrAppend(&maps, R"(, "maps": [ { "match": { "name": "/input" }, )",
              R"("rename": { "name": "/g)",
              i % std::max(1, shape.chain_maps / shape.chain_length),
              R"(/s0" } } ] })");
  }
  maps += "\n] }\n";
  Generated generated;
  generated.main = directory + "/main.json";
  const std::string main =
      R"({ "imports": [ "nodes.json", "channels.json", "maps.json" ] })";
  WriteFile(directory + "/nodes.json", nodes);
  WriteFile(directory + "/channels.json", channels);
  WriteFile(directory + "/maps.json", maps);
  WriteFile(generated.main, main);
  generated.bytes = nodes.size() + channels.size() + maps.size() + main.size();
  generated.elements = shape.channels + shape.nodes + shape.node_maps +
                       shape.chain_maps + shape.applications;
  return generated;
}

// The fastest of repeated loads, in seconds.
double BestLoadSeconds(const std::string& path) {
  using Clock = std::chrono::steady_clock;
  double best = 1e9;
  const Clock::time_point start = Clock::now();
  for (int run = 0;; ++run) {
    const Clock::time_point before = Clock::now();
    auto config = configuration::ReadConfig(path);
    const Clock::time_point after = Clock::now();
    if (!config.ok()) {
      ExitForUserError(StrCat("generated config does not load: ",
                              config.status().message()));
    }
    best =
        std::min(best, std::chrono::duration<double>(after - before).count());
    if (run >= 2 && std::chrono::duration<double>(after - start).count() >=
                        FLAGS_min_seconds) {
      return best;
    }
  }
}

// The time GetChannel takes per channel, asking for every channel of the
// config by its name as application app0 on node n0 (or no node).
double LookupNsPerChannel(const std::string& path) {
  auto config = configuration::ReadConfig(path);
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  const Configuration& c = config->message();
  const Node* node =
      configuration::MultiNode(c) ? configuration::GetNode(c, "n0") : nullptr;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point before = Clock::now();
  size_t found = 0;
  for (const Channel* channel : *c.channels()) {
    found += configuration::GetChannel(c, channel->name()->string_view(),
                                       channel->type()->string_view(), "app0",
                                       node) != nullptr;
  }
  const Clock::time_point after = Clock::now();
  benchmark_sink += found;
  return std::chrono::duration<double, std::nano>(after - before).count() /
         c.channels()->size();
}

// Prints one row; returns ns per element.
double Measure(const Shape& shape, const std::string& directory,
               double baseline_ns) {
  const Generated generated = Generate(shape, directory);
  const double seconds = BestLoadSeconds(generated.main);
  const double ns_per_element = seconds * 1e9 / generated.elements;
  std::printf("%-28s %8d %8d %8d %8d %9d %10.1f %10.2f %11.0f %8.2f %10.0f\n",
              shape.label.c_str(), shape.channels,
              shape.node_maps + shape.chain_maps, shape.nodes,
              shape.applications, generated.elements, generated.bytes / 1024.0,
              seconds * 1e3, ns_per_element,
              baseline_ns > 0 ? ns_per_element / baseline_ns : 1.0,
              LookupNsPerChannel(generated.main));
  return ns_per_element;
}

void PrintHeader() {
  std::printf("%-28s %8s %8s %8s %8s %9s %10s %10s %11s %8s\n", "config",
              "channels", "maps", "nodes", "apps", "elements", "KB", "load ms",
              "ns/element", "ratio");
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: config_scale_benchmark [--min_seconds=S]\n"
      "Reads generated configs of growing size and prints the time per "
      "element.");
  aos::RefuseArguments(argc, argv);
  aos::ExitOnFlagError(
      aos::CheckNotNegative("--min_seconds", FLAGS_min_seconds));
  const char* tmp = getenv("TEST_TMPDIR");
  std::string root = aos::StrCat(tmp != nullptr ? tmp : "/tmp",
                                 "/config_scale_benchmark.XXXXXX");
  if (mkdtemp(root.data()) == nullptr) {
    aos::ExitForUserError(aos::StrCat("cannot make a directory ", root));
  }

  std::printf(
      "ReadConfig (load, merge, validate, map loops) of generated configs; "
      "fastest of repeated loads.\nratio: ns/element against the first row "
      "of its table (flat = linear).\n\n");
  aos::PrintHeader();
  double baseline = 0;
  for (int n : {10, 100, 1000, 10000}) {
    aos::Shape shape{.label = aos::StrCat("everything x", n),
                     .channels = n,
                     .nodes = n,
                     .node_maps = n / 2,
                     .chain_maps = n / 2,
                     .chain_length = std::min(50, std::max(1, n / 2)),
                     .applications = std::max(1, n / 10)};
    const double ns =
        aos::Measure(shape, aos::StrCat(root, "/all", n), baseline);
    if (baseline == 0) baseline = ns;
  }

  std::printf(
      "\nRenaming-map chains (one chain each), 20 applications and "
      "20 nodes asking:\n");
  aos::PrintHeader();
  baseline = 0;
  for (int n : {10, 100, 1000, 10000}) {
    aos::Shape shape{.label = aos::StrCat("chain of ", n),
                     .channels = 10,
                     .nodes = 20,
                     .node_maps = 20,
                     .chain_maps = n,
                     .chain_length = n,
                     .applications = 20};
    const double ns =
        aos::Measure(shape, aos::StrCat(root, "/chain", n), baseline);
    if (baseline == 0) baseline = ns;
  }

  std::printf("\nGoal: 10,000 channels with 1,000 maps load in under 1 s:\n");
  aos::PrintHeader();
  aos::Shape goal{.label = "goal",
                  .channels = 10000,
                  .nodes = 20,
                  .node_maps = 20,
                  .chain_maps = 980,
                  .chain_length = 49,
                  .applications = 50};
  aos::Measure(goal, aos::StrCat(root, "/goal"), 0);
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
  return 0;
}
