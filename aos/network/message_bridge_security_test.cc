// Who can make a message bridge re-send what. With DDS Security
// (--dds_security), a peer without a certificate of the bridges' CA, or with
// one of another CA, writes forged Pings and probes into the same domain
// and topics, and none reaches pi2's shared memory or its statistics, while
// the real pi1 forwards as usual. Without it, a forged Ping does reach
// pi2, and a storm of forged reboots is believed only up to the limit, and
// said. Bad security files are one line and exit 1. Real bridge processes
// on loopback; no timing is asserted, and every wait has a generous deadline
// that fails naming what never came.
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "aos/network/bridge_test_nodes.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/network/test_certificates.h"
#include "examples/ping_generated.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Generous: DDS Security's handshakes make discovery slower than plain
// DDS's, and the machine may be loaded.
constexpr auto kDeadline = seconds(90);

class MessageBridgeSecurityTest : public BridgeTestNodes {
 protected:
  // One CA for the bridges, and another whose "pi1" is an impostor: made
  // once for all the tests (a second each).
  static void SetUpTestSuite() {
    ca_ = new std::string(MakeTestCa({"pi1", "pi2"}));
    other_ca_ = new std::string(MakeTestCa({"pi1"}));
  }

  MessageBridgeSecurityTest()
      : BridgeTestNodes(DdsTestBinary::kMessageBridgeSecurity),
        ping_(configuration::GetChannel(config_.message(), "/test",
                                        "aos.examples.Ping", "pong", pi2_)),
        ping_index_(ChannelIndex(ping_)),
        pi1_index_(NodeIndex(pi1_)),
        pi2_index_(NodeIndex(pi2_)) {}

  std::unique_ptr<Subprocess> StartSecureBridge(std::string_view node) {
    return StartBridge(
        node, {"--timing_reports=false", StrCat("--dds_security=", *ca_)});
  }

  // What pi2 saw of pings pi1 sent, one every 10 ms (values 0, 1, ...).
  struct Forwarded {
    // Pings with a value >= 0 (pi1's) and < 0 (a forger's).
    int genuine = 0;
    int forged = 0;
    // The boots the pings came from, each once.
    std::vector<UUID> boots;
    UUID pi1_boot;
    // The first ClientStatistics after `genuine_wanted` pings that said pi1
    // is CONNECTED; empty if none came before the deadline (a failure then
    // names what never came).
    std::vector<uint8_t> statistics;
    const ClientStatistics* client_statistics() const {
      return statistics.empty()
                 ? nullptr
                 : flatbuffers::GetRoot<ClientStatistics>(statistics.data());
    }
  };

  // Runs pi1 sending pings and pi2 receiving them until `genuine_wanted`
  // real pings arrived and pi2's statistics then say pi1 is CONNECTED, or
  // kDeadline passed. `said` is what the bridges said, for a failure.
  Forwarded ForwardPings(int genuine_wanted,
                         const std::function<std::string()>& said) {
    Forwarded result;
    auto pi1 = MakeLoop("ping", pi1_);
    result.pi1_boot = pi1->boot_uuid();
    Sender<examples::Ping> sender = pi1->MakeSender<examples::Ping>("/test");
    int next = 0;
    TimerHandler* send = pi1->AddTimer([&]() {
      auto builder = sender.MakeBuilder();
      examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
      ping.add_value(next++);
      (void)builder.Send(ping.Finish());
    });
    pi1->OnRun(
        [&]() { send->Schedule(pi1->monotonic_now(), milliseconds(10)); });

    auto pi2 = MakeLoop("pong", pi2_);
    pi2->MakeWatcher("/test", [&](const examples::Ping& ping) {
      ++(ping.value() < 0 ? result.forged : result.genuine);
      const UUID& boot = pi2->context().source_boot_uuid;
      if (std::find(result.boots.begin(), result.boots.end(), boot) ==
          result.boots.end()) {
        result.boots.push_back(boot);
      }
    });
    pi2->MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
      const ClientConnection* from_pi1 = statistics.connections()->Get(0);
      if (result.genuine < genuine_wanted ||
          from_pi1->state() != State::CONNECTED) {
        return;
      }
      const Context& context = pi2->context();
      result.statistics.assign(
          static_cast<const uint8_t*>(context.data),
          static_cast<const uint8_t*>(context.data) + context.size);
      pi1->Exit();
      pi2->Exit();
    });
    TimerHandler* deadline = pi2->AddTimer([&]() {
      ADD_FAILURE() << result.genuine << " real pings crossed, and no "
                    << "statistics said CONNECTED after " << genuine_wanted
                    << "; " << said();
      pi1->Exit();
      pi2->Exit();
    });
    pi2->OnRun([&]() { deadline->Schedule(pi2->monotonic_now() + kDeadline); });
    std::thread pi1_thread([&]() { pi1->Run(); });
    pi2->Run();
    pi1_thread.join();
    return result;
  }

  static std::string* ca_;
  static std::string* other_ca_;
  const Channel* const ping_;
  const uint32_t ping_index_;
  const uint32_t pi1_index_;
  const uint32_t pi2_index_;
};

std::string* MessageBridgeSecurityTest::ca_ = nullptr;
std::string* MessageBridgeSecurityTest::other_ca_ = nullptr;

// A hostile peer in the test's domain (bridge_forger, a process of its
// own): well-formed Pings (value `ping_value`) on the Ping topic and probes
// with a new boot each to pi2's probe topic, in pi1's name, every
// `period_ms`: what the campaign's forger did. With `security_dir`, it
// presents pi1's certificate of that directory's CA.
class Forger {
 public:
  struct Counts {
    int pings = -1;
    int probes = -1;
    std::string matched;
  };

  Forger(const std::string& out_dir, uint32_t domain, uint32_t ping_index,
         uint32_t pi1_index, uint32_t pi2_index, int32_t ping_value,
         int period_ms, const std::string& security_dir = "") {
    std::filesystem::create_directories(out_dir);
    std::vector<std::string> args = {StrCat("--dds_domain=", domain),
                                     "--dds_interface=lo",
                                     StrCat("--channel_index=", ping_index),
                                     StrCat("--from_node=", pi1_index),
                                     StrCat("--to_node=", pi2_index),
                                     StrCat("--ping_value=", ping_value),
                                     StrCat("--period_ms=", period_ms)};
    if (!security_dir.empty()) {
      args.push_back(StrCat("--dds_security=", security_dir));
    }
    process_ = std::make_unique<Subprocess>(
        aos::testing::ArtifactPath("aos/network/bridge_forger"),
        std::move(args), out_dir);
  }

  // Stops it, and what it wrote.
  Counts Stop() {
    Counts counts;
    const int status = process_->Terminate();
    EXPECT_EQ(status, 0) << process_->Stderr();
    std::istringstream out(process_->Stdout());
    std::string pings, probes, matched;
    out >> pings >> probes >> matched;
    if (pings.starts_with("pings=")) counts.pings = std::stoi(pings.substr(6));
    if (probes.starts_with("probes=")) {
      counts.probes = std::stoi(probes.substr(7));
    }
    if (matched.starts_with("matched=")) counts.matched = matched.substr(8);
    return counts;
  }

  std::string Stderr() const { return process_->Stderr(); }

 private:
  std::unique_ptr<Subprocess> process_;
};

// Both bridges with the CA's certificates: pings cross, the statistics say
// CONNECTED, and each bridge said at start that it is authenticated and
// encrypted.
TEST_F(MessageBridgeSecurityTest, SecureBridgesForwardAndSaySo) {
  auto bridge1 = StartSecureBridge("pi1");
  auto bridge2 = StartSecureBridge("pi2");
  const Forwarded forwarded = ForwardPings(50, [&]() {
    return StrCat("bridge pi1 said:\n", bridge1->Stderr(),
                  "\nbridge pi2 said:\n", bridge2->Stderr());
  });

  const ClientStatistics* statistics = forwarded.client_statistics();
  ASSERT_NE(statistics, nullptr);
  const ClientConnection* from_pi1 = statistics->connections()->Get(0);
  EXPECT_EQ(from_pi1->node()->string_view(), "pi1");
  EXPECT_EQ(from_pi1->state(), State::CONNECTED);
  EXPECT_GE(from_pi1->received_packets(), 50u);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(),
            forwarded.pi1_boot.ToString());
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
  for (auto [node, bridge] :
       {std::pair{"pi1", bridge1.get()}, std::pair{"pi2", bridge2.get()}}) {
    EXPECT_NE(bridge->Stderr().find(StrCat(
                  "message_bridge: ", node,
                  ": DDS Security on: authenticated, encrypted (identity "
                  "\"CN=",
                  node, ",O=aos\"")),
              std::string::npos)
        << bridge->Stderr();
  }
}

// With security on both bridges, two forgers write Pings and probes in
// pi1's name from before the bridges start until the real pi1's pings have
// crossed for a while: one without security, one with a certificate of
// another CA. Neither is matched, none of their Pings reaches pi2's shared
// memory, and pi2's statistics know only the real pi1: no reboot, nothing
// dropped, pi1's boot.
TEST_F(MessageBridgeSecurityTest, UnauthenticatedPeersReachNothing) {
  Forger plain_forger(dir_ + "/plain", domain_, ping_index_, pi1_index_,
                      pi2_index_, -1, 5);
  Forger impostor_forger(dir_ + "/impostor", domain_, ping_index_, pi1_index_,
                         pi2_index_, -2, 5, *other_ca_);
  auto bridge1 = StartSecureBridge("pi1");
  auto bridge2 = StartSecureBridge("pi2");
  // 200 real pings (2 s of them) after the secure handshake, which is
  // slower than the plain forger's discovery: the forgers had every chance.
  const Forwarded forwarded = ForwardPings(200, [&]() {
    return StrCat("bridge pi1 said:\n", bridge1->Stderr(),
                  "\nbridge pi2 said:\n", bridge2->Stderr());
  });

  for (Forger* forger : {&plain_forger, &impostor_forger}) {
    const Forger::Counts counts = forger->Stop();
    EXPECT_GT(counts.pings, 0) << forger->Stderr();
    EXPECT_GT(counts.probes, 0) << forger->Stderr();
    EXPECT_EQ(counts.matched, "false") << forger->Stderr();
  }
  EXPECT_EQ(forwarded.forged, 0);
  EXPECT_GE(forwarded.genuine, 200);
  EXPECT_EQ(forwarded.boots, std::vector<UUID>{forwarded.pi1_boot});

  const ClientStatistics* statistics = forwarded.client_statistics();
  ASSERT_NE(statistics, nullptr);
  EXPECT_EQ(statistics->dropped_unknown_node(), 0u);
  const ClientConnection* from_pi1 = statistics->connections()->Get(0);
  EXPECT_EQ(from_pi1->state(), State::CONNECTED);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(),
            forwarded.pi1_boot.ToString());
  EXPECT_EQ(from_pi1->reboots(), 0u);
  EXPECT_EQ(from_pi1->refused_reboots(), 0u);
  EXPECT_EQ(from_pi1->connection_count(), 1u);
  EXPECT_EQ(from_pi1->dropped_invalid(), 0u);
  EXPECT_EQ(from_pi1->dropped_unknown_channel(), 0u);
  // The real pi1 re-sends its newest ping once when pi2's reader matches
  // (MatchResend); on a loaded machine the match is seen after that ping
  // already crossed, and pi2 counts and drops the copy. More than one copy
  // per connection would be something else.
  EXPECT_LE(from_pi1->duplicate_packets(), from_pi1->connection_count());
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
  // What Cyclone said of the impostor's handshakes (the subject of the
  // certificate it presented, among others) came through the escaped,
  // rate-limited sink, if at all: no line of Cyclone's own form
  // ("1795510651.263748 [57] fsm: ...").
  const std::regex cyclone_raw(R"(^[0-9]+\.[0-9]{6} \[[0-9]+\])");
  for (const std::string& said : {bridge1->Stderr(), bridge2->Stderr()}) {
    std::istringstream lines(said);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_FALSE(std::regex_search(line, cyclone_raw)) << line;
      if (line.find("Cyclone DDS") != std::string::npos) {
        EXPECT_TRUE(line.starts_with("message_bridge: Cyclone DDS: \""))
            << line;
      }
    }
  }
}

// Without security, the same forger is heard: its Ping is re-sent into
// pi2's shared memory as pi1's (the threat docs/network.md states). Its
// stream of new boots is believed 3 times (the limit), the rest refused and
// counted, and the bridge says so in one line naming pi1.
TEST_F(MessageBridgeSecurityTest,
       WithoutSecurityForgeriesReachButRebootsAreLimited) {
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});

  auto pi2 = MakeLoop("pong", pi2_);
  int forged = 0;
  pi2->MakeWatcher("/test", [&](const examples::Ping& ping) {
    if (ping.value() == -1) ++forged;
  });
  std::vector<uint8_t> statistics_copy;
  pi2->MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
    const ClientConnection* from_pi1 = statistics.connections()->Get(0);
    if (forged == 0 || from_pi1->refused_reboots() < 10) return;
    const Context& context = pi2->context();
    statistics_copy.assign(
        static_cast<const uint8_t*>(context.data),
        static_cast<const uint8_t*>(context.data) + context.size);
    pi2->Exit();
  });
  Forger forger(dir_ + "/forger", domain_, ping_index_, pi1_index_, pi2_index_,
                -1, 2);
  TimerHandler* deadline = pi2->AddTimer([&]() {
    ADD_FAILURE() << forged << " forged pings arrived, and no statistics "
                  << "counted 10 refused reboots; the bridge said:\n"
                  << bridge2->Stderr();
    pi2->Exit();
  });
  pi2->OnRun([&]() { deadline->Schedule(pi2->monotonic_now() + kDeadline); });
  pi2->Run();

  const Forger::Counts counts = forger.Stop();
  EXPECT_EQ(counts.matched, "true") << forger.Stderr();
  EXPECT_GT(forged, 0);
  ASSERT_FALSE(statistics_copy.empty());
  const auto* statistics =
      flatbuffers::GetRoot<ClientStatistics>(statistics_copy.data());
  const ClientConnection* from_pi1 = statistics->connections()->Get(0);
  // The first forged boot connects, the next 3 are believed, then no more
  // within the minute.
  EXPECT_EQ(from_pi1->reboots(), 3u);
  EXPECT_GE(from_pi1->refused_reboots(), 10u);
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
  const std::string said = bridge2->Stderr();
  EXPECT_NE(said.find("message_bridge: pi2: DDS Security off: peers are not "
                      "authenticated"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("message_bridge: pi2: peer pi1 changed its boot more "
                      "than 3 times within 60 s (3 reboots believed so far)"),
            std::string::npos)
      << said;
}

// A bad --dds_security is one line naming the file, and exit 1: no CHECK,
// no Cyclone trace.
TEST_F(MessageBridgeSecurityTest, BadSecurityFilesAreOneLineAndExit1) {
  // pi2's directory with the impostor's certificate and key.
  const std::string mixed = dir_ + "/mixed";
  std::filesystem::copy(*ca_, mixed, std::filesystem::copy_options::recursive);
  for (const char* file : {"identity.pem", "identity_key.pem"}) {
    std::filesystem::copy_file(
        StrCat(*other_ca_, "/pi1/", file), StrCat(mixed, "/pi2/", file),
        std::filesystem::copy_options::overwrite_existing);
  }
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::vector<Case> cases = {
      {{"--dds_security=/nonexistent/dds"},
       "message_bridge: --dds_security=/nonexistent/dds: identity CA "
       "certificate /nonexistent/dds/identity_ca.pem: no such file"},
      {{StrCat("--dds_security=", mixed)},
       StrCat("message_bridge: --dds_security=", mixed,
              ": identity certificate ", mixed,
              "/pi2/identity.pem: not accepted by the identity CA ", mixed,
              "/identity_ca.pem: unable to get local issuer certificate")},
      {{StrCat("--dds_security=", *ca_), "--dds_security_plugins=/nope"},
       "message_bridge: --dds_security_plugins=/nope: Cyclone DDS's security "
       "plugin /nope/libdds_security_auth.so: no such file (Debian's "
       "libddsc0debian has the plugins; --dds_security_plugins names another "
       "directory)"},
      {{"--dds_security_plugins=/nope"},
       "message_bridge: --dds_security_plugins is given without "
       "--dds_security: give the directory of the certificates too, or "
       "neither"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.front());
    std::vector<std::string> args = c.args;
    args.push_back("--timing_reports=false");
    auto bridge = StartBridge("pi2", args);
    EXPECT_EQ(bridge->Wait(), 1);
    EXPECT_EQ(bridge->Stderr(), c.line + "\n");
    EXPECT_EQ(bridge->Stdout(), "");
  }
}

}  // namespace
}  // namespace aos::message_bridge
