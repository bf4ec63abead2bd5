#include "aos/network/dds_participant.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>

#include "aos/network/cyclone_log.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::message_bridge {
namespace {

// The batch_writes of each domain this process made through Make(): Cyclone
// keeps the first configuration of a domain for every later participant.
std::mutex domain_batching_mutex;
std::map<uint32_t, bool>& DomainBatching() {
  static std::map<uint32_t, bool>* batching = new std::map<uint32_t, bool>();
  return *batching;
}

// Cyclone's configuration for one domain: the interface, write batching,
// the sockets' receive buffer, quiet tracing.
std::string CycloneXml(const DdsParticipant::Options& options) {
  std::string interface;
  if (!options.interface.empty()) {
    const bool is_address =
        options.interface.find_first_not_of("0123456789.:abcdefABCDEF") ==
            std::string::npos &&
        options.interface.find_first_of(".:") != std::string::npos;
    interface = StrCat("<General><Interfaces><NetworkInterface ",
                       is_address ? "address" : "name", "=\"",
                       options.interface, "\"/></Interfaces></General>");
  }
  // Per domain, unlike dds_write_set_batch(), which sets it for every
  // domain of the process.
  const std::string internal = StrCat(
      "<Internal>", options.batch_writes ? "<WriteBatch>true</WriteBatch>" : "",
      DdsParticipant::SocketReceiveBufferXml(), "</Internal>");
  return StrCat("<CycloneDDS><Domain id=\"any\">", interface, internal,
                "<Tracing><Verbosity>warning</Verbosity>"
                "<OutputFile>stderr</OutputFile></Tracing>"
                "</Domain></CycloneDDS>");
}

dds_qos_t* MakeQos(const DdsParticipant::Qos& qos) {
  dds_qos_t* result = dds_create_qos();
  dds_qset_reliability(
      result,
      qos.reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
      // A full writer history never blocks the loop: the
      // write fails instead, and is counted.
      0);
  dds_qset_history(result, DDS_HISTORY_KEEP_LAST, qos.depth);
  dds_qset_durability(result, DDS_DURABILITY_VOLATILE);
  if (qos.lifespan_ns > 0) dds_qset_lifespan(result, qos.lifespan_ns);
  return result;
}

}  // namespace

namespace {

// Listener callbacks, in Cyclone's threads: `arg` is the Signal.
void OnDataAvailable(dds_entity_t reader, void* arg) {
  static_cast<DdsParticipant::Signal*>(arg)->OnArrival(reader);
}

void OnPublicationMatched(dds_entity_t,
                          const dds_publication_matched_status_t status,
                          void* arg) {
  if (status.current_count_change > 0) {
    static_cast<DdsParticipant::Signal*>(arg)->Raise();
  }
}

}  // namespace

void DdsParticipant::Signal::Raise() {
  // Raised already: the eventfd was written, and the loop's Take(), still
  // to come, sees the samples that arrived before this Raise.
  if (raised_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t one = 1;
  // Fails (EAGAIN) only when the counter is saturated: readable already.
  [[maybe_unused]] ssize_t written = write(wakeup_fd_, &one, sizeof(one));
}

void DdsParticipant::Signal::OnArrival(dds_entity_t reader) {
  if (in_listener_ && !in_listener_(reader)) return;
  Raise();
}

std::string DdsParticipant::SocketReceiveBufferXml() {
  // "default" as the least accepted: Cyclone then takes what the kernel
  // grants, without a complaint.
  return StrCat("<SocketReceiveBufferSize min=\"default\" max=\"",
                kSocketReceiveBufferBytes, "B\"/>");
}

std::optional<int64_t> DdsParticipant::GrantedSocketReceiveBufferBytes() {
  std::ifstream file("/proc/sys/net/core/rmem_max");
  int64_t limit = 0;
  if (!(file >> limit) || limit <= 0) return std::nullopt;
  return std::min(limit, kSocketReceiveBufferBytes);
}

absl::StatusOr<std::unique_ptr<DdsParticipant>> DdsParticipant::Make(
    const Options& options) {
  if (options.domain > 230) {
    return absl::InvalidArgumentError(
        StrCat("DDS domain ", options.domain, " is out of range (0-230)"));
  }
  InstallCycloneLog();
  std::unique_ptr<DdsParticipant> result(new DdsParticipant());
  result->domain_id_ = options.domain;
  // Checked before the domain exists: a bad file is named, and nothing of
  // Cyclone's runs for it.
  if (options.security.has_value()) {
    absl::StatusOr<DdsSecurityInfo> info =
        CheckDdsSecurityFiles(*options.security);
    if (!info.ok()) return info.status();
    result->security_ = *std::move(info);
  }
  const std::string xml = CycloneXml(options);
  std::lock_guard<std::mutex> lock(domain_batching_mutex);
  {
    // Why Cyclone refuses a domain (an interface it cannot use) is said in
    // our one line.
    CycloneLogCapture capture;
    result->domain_ = dds_create_domain(options.domain, xml.c_str());
    if (result->domain_ < 0 &&
        result->domain_ != DDS_RETCODE_PRECONDITION_NOT_MET) {
      return absl::InvalidArgumentError(
          StrCat("Cyclone DDS refused domain ", options.domain,
                 options.interface.empty()
                     ? std::string()
                     : StrCat(" on interface ", options.interface),
                 ": ", dds_strretcode(result->domain_), ": ", capture.Summary(),
                 " (is the interface up and does it have an address?)"));
    }
    capture.Release();
  }
  // PRECONDITION_NOT_MET: this process made the domain already, with the
  // configuration of then.
  if (result->domain_ < 0) {
    result->domain_ = 0;
    auto made = DomainBatching().find(options.domain);
    if (made != DomainBatching().end() &&
        made->second != options.batch_writes) {
      return absl::FailedPreconditionError(
          StrCat("DDS domain ", options.domain,
                 " was made in this process with batch_writes=",
                 made->second ? "true" : "false",
                 ", which every participant on it shares; this one asked for ",
                 options.batch_writes ? "true" : "false"));
    }
  } else {
    DomainBatching()[options.domain] = options.batch_writes;
  }
  dds_qos_t* qos = nullptr;
  if (options.security.has_value()) {
    qos = dds_create_qos();
    SetDdsSecurityProperties(*options.security, qos);
  }
  {
    // What Cyclone says while it makes the participant (loading the
    // plugins, validating the identity and permissions) is said in our
    // line if it refuses.
    CycloneLogCapture capture;
    result->participant_ = dds_create_participant(options.domain, qos, nullptr);
    if (qos != nullptr) dds_delete_qos(qos);
    if (result->participant_ < 0) {
      return absl::InvalidArgumentError(StrCat(
          "Cyclone DDS could not make a ",
          options.security.has_value()
              ? StrCat("secure participant (", options.security->source, ")")
              : std::string("participant"),
          " in domain ", options.domain, ": ",
          dds_strretcode(result->participant_), ": ", capture.Summary()));
    }
    capture.Release();
  }
  result->wakeup_fd_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  PCHECK(result->wakeup_fd_.valid()) << "eventfd";
  return result;
}

DdsParticipant::~DdsParticipant() {
  // Deleting the participant waits for running listeners.
  if (participant_ > 0) dds_delete(participant_);
  if (domain_ > 0) {
    std::lock_guard<std::mutex> lock(domain_batching_mutex);
    dds_delete(domain_);
    DomainBatching().erase(domain_id_);
  }
}

void DdsParticipant::ClearWakeup() {
  uint64_t count;
  [[maybe_unused]] ssize_t got = read(wakeup_fd_.get(), &count, sizeof(count));
}

std::string DdsParticipant::TopicName(uint32_t channel_index,
                                      std::string_view name,
                                      std::string_view type) {
  std::string topic = StrCat("aos_", channel_index, "_", name, "_", type);
  for (char& c : topic) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return topic;
}

absl::StatusOr<dds_entity_t> DdsParticipant::Topic(
    const dds_topic_descriptor_t* type, const std::string& name) {
  const dds_entity_t topic =
      dds_create_topic(participant_, type, name.c_str(), nullptr, nullptr);
  if (topic < 0) {
    return absl::InternalError(StrCat("Cyclone DDS refused topic ", name, ": ",
                                      dds_strretcode(topic)));
  }
  return topic;
}

absl::StatusOr<dds_entity_t> DdsParticipant::MakeWriter(
    const dds_topic_descriptor_t* type, const std::string& topic_name,
    const Qos& qos, Signal* matched) {
  absl::StatusOr<dds_entity_t> topic = Topic(type, topic_name);
  if (!topic.ok()) return topic.status();
  dds_qos_t* dds_qos = MakeQos(qos);
  dds_listener_t* listener = nullptr;
  if (matched != nullptr) {
    matched->wakeup_fd_ = wakeup_fd_.get();
    listener = dds_create_listener(matched);
    dds_lset_publication_matched(listener, OnPublicationMatched);
  }
  const dds_entity_t writer =
      dds_create_writer(participant_, *topic, dds_qos, listener);
  dds_delete_qos(dds_qos);
  if (listener != nullptr) dds_delete_listener(listener);
  if (writer < 0) {
    return absl::InternalError(StrCat("Cyclone DDS refused a writer on ",
                                      topic_name, ": ",
                                      dds_strretcode(writer)));
  }
  return writer;
}

absl::StatusOr<dds_entity_t> DdsParticipant::MakeReader(
    const dds_topic_descriptor_t* type, const std::string& topic_name,
    const Qos& qos, Signal* arrived) {
  absl::StatusOr<dds_entity_t> topic = Topic(type, topic_name);
  if (!topic.ok()) return topic.status();
  dds_qos_t* dds_qos = MakeQos(qos);
  arrived->wakeup_fd_ = wakeup_fd_.get();
  dds_listener_t* listener = dds_create_listener(arrived);
  dds_lset_data_available(listener, OnDataAvailable);
  const dds_entity_t reader =
      dds_create_reader(participant_, *topic, dds_qos, listener);
  dds_delete_qos(dds_qos);
  dds_delete_listener(listener);
  if (reader < 0) {
    return absl::InternalError(StrCat("Cyclone DDS refused a reader on ",
                                      topic_name, ": ",
                                      dds_strretcode(reader)));
  }
  return reader;
}

}  // namespace aos::message_bridge
