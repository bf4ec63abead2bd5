// aos_starter: asks a node's starter (starterd) what its applications are
// doing, and starts, stops or restarts one of them, through the
// aos.starter.Status and aos.starter.StarterRpc channels; across nodes
// through the message bridge. docs/starter.md.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "aos/config_flag.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_resolution.h"
#include "aos/starter/application_spec.h"
#include "aos/starter/starter_generated.h"
#include "aos/starter/starter_rpc_generated.h"
#include "aos/util/flag_checks.h"
#include "aos/util/plain_table.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(node, "",
              "The node whose starter to ask, as AOS's aos_starter (default: "
              "this node).");
DEFINE_string(this_node, "",
              "The node aos_starter runs as (default: the node whose hostname "
              "is this machine's, else --node): another node's starter is "
              "reached through the message bridge.");
DEFINE_bool(until_reporting, false,
            "start, restart: also wait until the application sends timing "
            "reports (how a script starts what depends on it).");
DEFINE_double(timeout_s, 10,
              "How long to wait for the starter's status, or for a command's "
              "result (seconds, > 0).");

namespace aos::starter {
namespace {

using std::chrono::steady_clock;

struct Nodes {
  // Null in a single-node config.
  const Node* target = nullptr;
  const Node* self = nullptr;
};

Nodes ResolveNodes(const Configuration& config) {
  Nodes nodes;
  absl::StatusOr<const Node*> self =
      ResolveNode(config, FLAGS_this_node, ThisHostname());
  if (!self.ok() && FLAGS_this_node.empty() && !FLAGS_node.empty()) {
    self = ResolveNode(config, FLAGS_node, "");
  }
  if (!self.ok()) {
    ExitForUserError(StrCat("--this_node: ", self.status().message()));
  }
  nodes.self = *self;
  nodes.target = nodes.self;
  if (!FLAGS_node.empty()) {
    absl::StatusOr<const Node*> target = ResolveNode(config, FLAGS_node, "");
    if (!target.ok()) ExitForUserError(StrCat(target.status().message()));
    nodes.target = *target;
  }
  return nodes;
}

std::string NodeName(const Node* node) {
  return node == nullptr ? std::string("this node")
                         : StrCat("node ", node->name()->string_view());
}

// The newest status of the target's starter, waiting up to --timeout_s
// for one sent after `after` (or any when `after` is min_time).
const Status* WaitForStatus(Fetcher<Status>* fetcher,
                            monotonic_clock::time_point after,
                            const Nodes& nodes) {
  const steady_clock::time_point end =
      steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(
                                std::chrono::duration<double>(FLAGS_timeout_s));
  while (true) {
    if (fetcher->Fetch() || fetcher->get() != nullptr) {
      if (fetcher->context().monotonic_event_time > after) {
        return fetcher->get();
      }
    }
    if (steady_clock::now() >= end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ExitForUserError(StrCat("no aos.starter.Status from the starter of ",
                          NodeName(nodes.target), " within ", FLAGS_timeout_s,
                          " s: is starterd running there (with the same "
                          "--shm_base)?"));
}

const ApplicationStatus* FindStatus(const Status& status,
                                    std::string_view name) {
  if (status.statuses() == nullptr) return nullptr;
  for (const ApplicationStatus* application : *status.statuses()) {
    if (application->name() != nullptr &&
        application->name()->string_view() == name) {
      return application;
    }
  }
  return nullptr;
}

std::string Uptime(const ApplicationStatus& application,
                   monotonic_clock::time_point now) {
  if (application.state() != State::RUNNING) return "-";
  const double seconds =
      std::chrono::duration<double>(
          now - monotonic_clock::time_point(
                    std::chrono::nanoseconds(application.last_start_time())))
          .count();
  return StrCat(static_cast<int64_t>(seconds), " s");
}

std::string LastExit(const ApplicationStatus& application) {
  if (application.id() == 0 ||
      (application.last_exit_code() == 0 &&
       application.last_exit_signal() == 0 &&
       application.last_stop_reason() == LastStopReason::STOP_REQUESTED)) {
    return "-";
  }
  return StrCat(
      application.last_exit_signal() != 0
          ? StrCat("signal ", application.last_exit_signal())
          : StrCat("status ", static_cast<int>(application.last_exit_code())),
      " (", EnumNameLastStopReason(application.last_stop_reason()), ")");
}

void PrintStatus(const Status& status, monotonic_clock::time_point now) {
  PlainTable table(PlainTable::LastColumn::kLeft);
  table.AddRow({"NAME", "STATE", "PID", "RESTARTS", "UPTIME", "CPU", "MEMORY",
                "REPORTING", "LAST EXIT", "MESSAGE"});
  if (status.statuses() != nullptr) {
    for (const ApplicationStatus* application : *status.statuses()) {
      const ProcessInfo* info = application->process_info();
      table.AddRow(
          {InlinePrintable(application->name() == nullptr
                               ? std::string_view()
                               : application->name()->string_view()),
           EnumNameState(application->state()),
           application->pid() == 0 ? "-" : StrCat(application->pid()),
           StrCat(application->restarts()), Uptime(*application, now),
           info == nullptr
               ? "-"
               : StrCat(static_cast<int>(info->cpu_usage() * 100 + 0.5), "%"),
           info == nullptr
               ? "-"
               : StrCat(info->physical_memory() / (1024 * 1024), " MiB"),
           application->has_active_timing_report() ? "yes" : "no",
           LastExit(*application),
           application->message() == nullptr
               ? ""
               : InlinePrintable(application->message()->string_view())});
    }
  }
  table.Print(&std::cout);
}

int Main(int argc, char** argv) {
  ExitOnFlagError(CheckAtLeast("--timeout_s", FLAGS_timeout_s, 0.001,
                               " is too short: give a time > 0"));
  if (argc < 2) {
    ExitForUserError(
        "give a command: status, start APP, stop APP or "
        "restart APP (see --help)");
  }
  const std::string command = argv[1];
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  const Nodes nodes = ResolveNodes(config->message());
  const std::string status_name = configuration::MapChannelName(
      config->message(), "/aos", Status::GetFullyQualifiedName(), "aos_starter",
      nodes.target);
  std::string why_not;
  if (configuration::GetChannel(config->message(), status_name,
                                Status::GetFullyQualifiedName(), "aos_starter",
                                nodes.self, &why_not) == nullptr) {
    ExitForUserError(StrCat("cannot read the starter status of ",
                            NodeName(nodes.target), " here: ", why_not));
  }
  ShmEventLoop loop(&config->message(), "aos_starter", nodes.self);
  Fetcher<Status> statuses = loop.MakeFetcher<Status>(status_name);
  if (command == "status") {
    if (argc != 2) ExitForUserError("status takes no application");
    const Status* status =
        WaitForStatus(&statuses, monotonic_clock::min_time, nodes);
    PrintStatus(*status, loop.monotonic_now());
    return 0;
  }
  Command rpc_command;
  if (command == "start") {
    rpc_command = Command::START;
  } else if (command == "stop") {
    rpc_command = Command::STOP;
  } else if (command == "restart") {
    rpc_command = Command::RESTART;
  } else {
    ExitForUserError(StrCat("unknown command '", InlinePrintable(command),
                            "': give status, start, stop or restart"));
  }
  if (argc != 3) ExitForUserError(StrCat(command, " takes one application"));
  const std::string name = argv[2];
  std::string known;
  bool found = false;
  for (const ApplicationSpec& spec :
       ApplicationsOf(config->message(), nodes.target, "")) {
    StrAppend(&known, known.empty() ? "" : ", ", spec.name);
    found = found || spec.name == name;
  }
  if (!found) {
    ExitForUserError(
        StrCat("no application '", InlinePrintable(name), "' on ",
               NodeName(nodes.target), " in --config=", FLAGS_config, " (",
               known.empty() ? "it has none" : StrCat("it has ", known), ")"));
  }
  const Status* before =
      WaitForStatus(&statuses, monotonic_clock::min_time, nodes);
  const ApplicationStatus* was = FindStatus(*before, name);
  const uint64_t old_id = was == nullptr ? 0 : was->id();
  const std::string rpc_name = configuration::MapChannelName(
      config->message(), "/aos", StarterRpc::GetFullyQualifiedName(),
      "aos_starter", nodes.self);
  Sender<StarterRpc> sender = loop.TryMakeSender<StarterRpc>(rpc_name);
  if (!sender.valid()) {
    ExitForUserError(StrCat("cannot send aos.starter.StarterRpc on ", rpc_name,
                            " from ", NodeName(nodes.self),
                            ": add the channel to the config"));
  }
  const monotonic_clock::time_point sent = loop.monotonic_now();
  {
    Sender<StarterRpc>::Builder builder = sender.MakeBuilder();
    flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
    const auto name_offset = fbb->CreateString(name);
    flatbuffers::Offset<
        flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
        nodes_offset;
    if (nodes.target != nodes.self) {
      nodes_offset = fbb->CreateVector(
          std::vector<flatbuffers::Offset<flatbuffers::String>>{
              fbb->CreateString(nodes.target->name()->string_view())});
    }
    StarterRpc::Builder rpc(*fbb);
    rpc.add_command(rpc_command);
    rpc.add_name(name_offset);
    if (!nodes_offset.IsNull()) rpc.add_nodes(nodes_offset);
    if (builder.Send(rpc.Finish()) != RawSender::Error::kOk) {
      ExitForUserError(StrCat("could not send the command on ", rpc_name));
    }
  }
  // The result: STOPPED for stop; RUNNING for start (a new run for
  // restart), or a WAITING/STOPPED state that says why not.
  const steady_clock::time_point end =
      steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(
                                std::chrono::duration<double>(FLAGS_timeout_s));
  const ApplicationStatus* now = nullptr;
  while (steady_clock::now() < end) {
    const Status* status = WaitForStatus(&statuses, sent, nodes);
    now = FindStatus(*status, name);
    if (now != nullptr) {
      const bool done =
          rpc_command == Command::STOP
              ? now->state() == State::STOPPED
              : (now->state() == State::RUNNING &&
                 (rpc_command == Command::START || now->id() != old_id) &&
                 (!FLAGS_until_reporting || now->has_active_timing_report())) ||
                    (now->state() == State::STOPPED &&
                     now->last_stop_reason() !=
                         LastStopReason::STOP_REQUESTED &&
                     now->last_stop_reason() !=
                         LastStopReason::RESTART_REQUESTED);
      if (done) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (now == nullptr) {
    ExitForUserError(StrCat("the starter of ", NodeName(nodes.target),
                            " does not list ", name));
  }
  const std::string said = StrCat(
      name, ": ", EnumNameState(now->state()),
      FLAGS_until_reporting && now->state() == State::RUNNING
          ? (now->has_active_timing_report()
                 ? ", reporting"
                 : StrCat(", no timing report in ", FLAGS_timeout_s, " s"))
          : "",
      now->pid() == 0 ? "" : StrCat(" (pid ", now->pid(), ")"),
      now->message() == nullptr ? ""
                                : StrCat(": ", now->message()->string_view()));
  const bool ok =
      rpc_command == Command::STOP
          ? now->state() == State::STOPPED
          : now->state() == State::RUNNING &&
                (!FLAGS_until_reporting || now->has_active_timing_report());
  if (!ok) ExitForUserError(said);
  printf("%s\n", said.c_str());
  return 0;
}

}  // namespace
}  // namespace aos::starter

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_starter [--config=FILE] [--shm_base=DIR] [--node=NAME]\n"
      "                   status | start APP | stop APP | restart APP\n"
      "status: a table of the node's applications (state, pid, restarts,\n"
      "uptime, CPU and memory over the starter's last period, whether it\n"
      "sends timing reports, how it last ended and why it is not running).\n"
      "start, stop, restart: sends the command to the node's starterd and\n"
      "waits (--timeout_s) until its status shows the result (with\n"
      "--until_reporting, until it also sends timing reports); exits 1,\n"
      "saying why, if it does not, or if APP is not an application of the\n"
      "node. --node talks to another node's starter through the message\n"
      "bridge.\n"
      "  aos_starter --config=bazel-bin/examples/pingpong_config.json "
      "restart pong\n"
      "See docs/starter.md.");
  return aos::starter::Main(argc, argv);
}
