#include "aos/starter/starter.h"

#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "aos/configuration_lookup.h"
#include "aos/util/exit_code.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::starter {
namespace {

// A change is published this soon at the latest, and no sooner after the
// last status (the channel's frequency).
constexpr std::chrono::milliseconds kChangeDelay(20);
// A timing report younger than this makes an application "reporting".
constexpr std::chrono::seconds kActiveReport(2);

// The modification time (ns) and size of `path`, or size -1.
std::pair<int64_t, int64_t> FileStamp(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return {0, -1};
  return {info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec,
          info.st_size};
}

}  // namespace

Starter::Starter(ShmEventLoop* loop, const Configuration* config,
                 const Node* node, StarterOptions options)
    : loop_(loop),
      node_(node),
      node_name_(node == nullptr ? "" : node->name()->str()),
      options_(std::move(options)),
      status_sender_(loop->MakeSender<Status>("/aos")) {
  std::error_code error;
  std::filesystem::create_directories(options_.supervisor.lock_dir, error);
  if (error) {
    LOG(WARNING) << "starter: cannot make the lock directory "
                 << options_.supervisor.lock_dir << ": " << error.message();
  }
  for (ApplicationSpec& spec :
       ApplicationsOf(*config, node, options_.binary_dir)) {
    applications_.push_back(std::make_unique<SupervisedApplication>(
        std::move(spec), &options_.supervisor));
  }
  if (!options_.config_path.empty()) {
    std::tie(config_mtime_ns_, config_size_) = FileStamp(options_.config_path);
  }
  exits_epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
  PCHECK(exits_epoll_.valid()) << "epoll_create1";
  loop_->OnReadable(exits_epoll_.get(), [this]() {
    ReapExited();
    Reschedule();
  });
  tick_ = loop_->AddTimer([this]() { OnTick(); });
  tick_->set_name("starter");
  loop_->MakeWatcher("/aos", [this](const timing::Report& report) {
    if (report.name() == nullptr) return;
    const std::string_view name = report.name()->string_view();
    auto it = last_report_.find(name);
    if (it == last_report_.end()) {
      it = last_report_.emplace(std::string(name), monotonic_clock::min_time)
               .first;
    }
    it->second = loop_->context().monotonic_event_time;
  });
  for (const Channel* channel : *config->channels()) {
    if (channel->type() == nullptr ||
        channel->type()->string_view() != StarterRpc::GetFullyQualifiedName() ||
        !configuration::ChannelIsReadableOnNode(*channel, node)) {
      continue;
    }
    const bool own = node == nullptr || channel->source_node() == nullptr ||
                     channel->source_node()->string_view() == node_name_;
    loop_->MakeRawWatcher(
        channel, [this, own](const Context& context, const void* data) {
          flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data),
                                         context.size);
          if (!VerifyStarterRpcBuffer(verifier)) {
            LOG(WARNING) << "starter: a StarterRpc that is not one ("
                         << context.size << " bytes): ignored";
            return;
          }
          const StarterRpc* rpc = GetStarterRpc(data);
          bool for_us =
              own && (rpc->nodes() == nullptr || rpc->nodes()->size() == 0);
          if (rpc->nodes() != nullptr) {
            for (const flatbuffers::String* name : *rpc->nodes()) {
              if (name->string_view() == node_name_) for_us = true;
            }
          }
          if (for_us) HandleCommand(*rpc);
        });
  }
  loop_->OnRun([this]() {
    const monotonic_clock::time_point now = loop_->monotonic_now();
    if (applications_.empty()) {
      LOG(WARNING) << "starter: no applications for "
                   << (node_ == nullptr ? std::string("this node")
                                        : StrCat("node ", node_name_))
                   << " in the configuration";
    }
    for (const std::unique_ptr<SupervisedApplication>& application :
         applications_) {
      if (application->spec().autostart) application->Start(now);
    }
    WatchExits();
    next_status_ = now;
    Reschedule();
  });
}

Starter::~Starter() {
  StopAll();
  loop_->StopReadable(exits_epoll_.get());
}

SupervisedApplication* Starter::Find(std::string_view name) {
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    if (application->spec().name == name) return application.get();
  }
  return nullptr;
}

std::vector<std::string> Starter::ExitLines() const {
  std::vector<std::string> lines;
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    if (application->last_exit().has_value()) {
      lines.push_back(StrCat(application->spec().name, " ",
                             *application->last_exit(), "\n"));
    }
  }
  return lines;
}

void Starter::HandleCommand(const StarterRpc& rpc) {
  const std::string_view name =
      rpc.name() == nullptr ? std::string_view() : rpc.name()->string_view();
  SupervisedApplication* application = Find(name);
  if (application == nullptr) {
    LOG(WARNING) << "starter: a " << EnumNameCommand(rpc.command())
                 << " command for '" << name
                 << "', which is not an application of this node: ignored";
    return;
  }
  const monotonic_clock::time_point now = loop_->monotonic_now();
  switch (rpc.command()) {
    case Command::START:
      application->Start(now);
      break;
    case Command::STOP:
      application->Stop(now, LastStopReason::STOP_REQUESTED);
      break;
    case Command::RESTART:
      application->Restart(now);
      break;
  }
  LOG(INFO) << "starter: " << EnumNameCommand(rpc.command()) << " " << name
            << ": " << EnumNameState(application->state());
  WatchExits();
  status_dirty_ = true;
  Reschedule();
}

void Starter::WatchExits() {
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    const int fd = application->child_exit_fd();
    if (fd < 0 || watched_exit_fds_.count(fd) != 0) continue;
    epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = fd;
    PCHECK(epoll_ctl(exits_epoll_.get(), EPOLL_CTL_ADD, fd, &event) == 0)
        << "epoll_ctl";
    watched_exit_fds_.emplace(fd, application.get());
  }
}

void Starter::ReapExited() {
  epoll_event events[16];
  const int ready = epoll_wait(exits_epoll_.get(), events, 16, 0);
  const monotonic_clock::time_point now = loop_->monotonic_now();
  for (int i = 0; i < ready; ++i) {
    auto it = watched_exit_fds_.find(events[i].data.fd);
    if (it == watched_exit_fds_.end()) continue;
    SupervisedApplication* application = it->second;
    int wait_status = 0;
    pid_t got;
    do {
      got = waitpid(application->pid(), &wait_status, WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got != application->pid()) continue;
    epoll_ctl(exits_epoll_.get(), EPOLL_CTL_DEL, it->first, nullptr);
    watched_exit_fds_.erase(it);
    const State before = application->state();
    application->OnExit(now, wait_status);
    if (before != State::STOPPING) {
      LOG(WARNING) << "starter: " << application->spec().name << " "
                   << DescribeExit(ExitCodeOf(wait_status)) << ": "
                   << EnumNameState(application->state())
                   << (application->message().empty()
                           ? ""
                           : StrCat(" (", application->message(), ")"));
    }
    status_dirty_ = true;
  }
  WatchExits();
}

void Starter::OnTick() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    const State before = application->state();
    application->Tick(now);
    if (application->state() != before) status_dirty_ = true;
  }
  // Applications that left the config go once they stopped.
  std::erase_if(
      applications_, [this](const std::unique_ptr<SupervisedApplication>& a) {
        const bool gone =
            a->state() == State::STOPPED && removed_.count(a->spec().name) != 0;
        if (gone) removed_.erase(a->spec().name);
        return gone;
      });
  WatchExits();
  if (now >= next_status_) {
    CheckConfig();
    for (const std::unique_ptr<SupervisedApplication>& application :
         applications_) {
      application->SampleUsage();
    }
    SendStatus();
    next_status_ = now + options_.status_period;
  } else if (status_dirty_ && now >= last_status_ + kChangeDelay) {
    SendStatus();
  }
  Reschedule();
}

void Starter::Reschedule() {
  monotonic_clock::time_point next = next_status_;
  if (status_dirty_) next = std::min(next, last_status_ + kChangeDelay);
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    std::optional<monotonic_clock::time_point> deadline =
        application->NextDeadline();
    if (deadline.has_value()) next = std::min(next, *deadline);
  }
  tick_->Schedule(std::max(next, monotonic_clock::epoch()));
}

void Starter::SendStatus() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  Sender<Status>::Builder builder = status_sender_.MakeBuilder();
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  std::vector<flatbuffers::Offset<ApplicationStatus>> statuses;
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    auto report = last_report_.find(application->spec().name);
    // A report of this run: a restarted one has not reported until it
    // sends one of its own.
    const bool reporting = report != last_report_.end() &&
                           now - report->second < kActiveReport &&
                           report->second >= application->last_start_time();
    statuses.push_back(application->PackStatus(fbb, reporting));
  }
  const auto vector = fbb->CreateVector(statuses);
  Status::Builder status(*fbb);
  status.add_statuses(vector);
  const RawSender::Error error = builder.Send(status.Finish());
  if (error != RawSender::Error::kOk && !status_error_said_) {
    LOG(WARNING) << "starter: could not send aos.starter.Status: "
                 << static_cast<int>(error);
    status_error_said_ = true;
  }
  last_status_ = now;
  status_dirty_ = false;
}

void Starter::CheckConfig() {
  if (options_.config_path.empty()) return;
  const std::pair<int64_t, int64_t> stamp = FileStamp(options_.config_path);
  if (stamp == std::make_pair(config_mtime_ns_, config_size_)) return;
  std::tie(config_mtime_ns_, config_size_) = stamp;
  absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> config =
      configuration::ReadConfig(options_.config_path);
  if (!config.ok()) {
    LOG(ERROR) << "starter: --config " << options_.config_path
               << " changed and does not read (" << config.status().message()
               << "): keeping the applications it had";
    return;
  }
  const Node* node = nullptr;
  if (node_ != nullptr) {
    node = configuration::GetNode(config->message(), node_name_);
    if (node == nullptr) {
      LOG(ERROR) << "starter: --config " << options_.config_path
                 << " changed and has no node " << node_name_
                 << ": keeping the applications it had";
      return;
    }
  }
  LOG(INFO) << "starter: --config " << options_.config_path
            << " changed: applying its applications";
  ApplySpecs(ApplicationsOf(config->message(), node, options_.binary_dir));
}

void Starter::ApplySpecs(std::vector<ApplicationSpec> specs) {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    const bool kept = std::any_of(
        specs.begin(), specs.end(), [&](const ApplicationSpec& spec) {
          return spec.name == application->spec().name;
        });
    if (!kept && removed_.count(application->spec().name) == 0) {
      removed_.insert(application->spec().name);
      application->Stop(now, LastStopReason::REMOVED_FROM_CONFIG);
    }
  }
  for (ApplicationSpec& spec : specs) {
    SupervisedApplication* application = Find(spec.name);
    if (application != nullptr) {
      removed_.erase(spec.name);
      application->UpdateSpec(std::move(spec), now);
      continue;
    }
    applications_.push_back(std::make_unique<SupervisedApplication>(
        std::move(spec), &options_.supervisor));
    if (applications_.back()->spec().autostart) {
      applications_.back()->Start(now);
    }
  }
  WatchExits();
  status_dirty_ = true;
}

void Starter::StopAll() {
  std::vector<SupervisedApplication*> order;
  for (const std::unique_ptr<SupervisedApplication>& application :
       applications_) {
    if (application->pid() != 0) order.push_back(application.get());
  }
  std::sort(order.begin(), order.end(),
            [](SupervisedApplication* a, SupervisedApplication* b) {
              return a->start_sequence() > b->start_sequence();
            });
  for (SupervisedApplication* application : order) {
    application->StopNow();
    LOG(INFO) << "starter: stopped " << application->spec().name;
  }
  for (const auto& [fd, application] : watched_exit_fds_) {
    epoll_ctl(exits_epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  }
  watched_exit_fds_.clear();
}

}  // namespace aos::starter
