#include "aos/util/idle_poller.h"

#include <sched.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

#include "aos/util/cpu_set.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

// The CPUs this test may use.
cpu_set_t AllowedCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  EXPECT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  return cpus;
}

// The scheduling policy of thread `tid` (field 41 of /proc/self/task/N/stat).
int PolicyOf(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  // The command name may hold spaces: count fields after its ')'.
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  // Field 3 (state) is the first after ')'; policy is field 41.
  for (int i = 3; i <= 41; ++i) fields >> field;
  return std::stoi(field);
}

// The blocked signals of thread `tid` (/proc's SigBlk: bit N-1 for signal
// N).
uint64_t BlockedSignalsOf(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("SigBlk:")) {
      return std::stoull(line.substr(line.find_last_of('\t') + 1), nullptr, 16);
    }
  }
  return 0;
}

TEST(IdlePollerTest, OneIdleThreadPinnedToEachCpu) {
  const cpu_set_t cpus = AllowedCpus();
  absl::StatusOr<std::unique_ptr<IdlePoller>> poller = IdlePoller::Start(cpus);
  ASSERT_TRUE(poller.ok()) << poller.status().message();
  EXPECT_EQ((*poller)->cpus(), FormatCpuList(cpus));
  const std::vector<pid_t> tids = (*poller)->thread_ids();
  ASSERT_EQ(static_cast<int>(tids.size()), CPU_COUNT(&cpus));
  int cpu = -1;
  for (pid_t tid : tids) {
    do {
      ++cpu;
    } while (!CPU_ISSET(cpu, &cpus));
    EXPECT_EQ(PolicyOf(tid), SCHED_IDLE) << "thread " << tid;
    const uint64_t blocked = BlockedSignalsOf(tid);
    for (int signal : {SIGINT, SIGHUP, SIGTERM, SIGRTMIN, SIGRTMAX}) {
      EXPECT_NE(blocked & (uint64_t{1} << (signal - 1)), 0u)
          << "thread " << tid << " does not block signal " << signal;
    }
    cpu_set_t affinity;
    CPU_ZERO(&affinity);
    ASSERT_EQ(sched_getaffinity(tid, sizeof(affinity), &affinity), 0);
    EXPECT_EQ(CPU_COUNT(&affinity), 1);
    EXPECT_TRUE(CPU_ISSET(cpu, &affinity)) << "thread " << tid;
  }
}

TEST(IdlePollerTest, DestructionEndsTheThreads) {
  const cpu_set_t cpus = AllowedCpus();
  std::vector<pid_t> tids;
  {
    absl::StatusOr<std::unique_ptr<IdlePoller>> poller =
        IdlePoller::Start(cpus);
    ASSERT_TRUE(poller.ok()) << poller.status().message();
    tids = (*poller)->thread_ids();
  }
  for (pid_t tid : tids) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    EXPECT_FALSE(stat.good()) << "thread " << tid << " still runs";
  }
}

TEST(IdlePollerTest, NoCpuIsAnError) {
  cpu_set_t none;
  CPU_ZERO(&none);
  absl::StatusOr<std::unique_ptr<IdlePoller>> poller = IdlePoller::Start(none);
  ASSERT_FALSE(poller.ok());
  EXPECT_EQ(poller.status().message(), "idle poller: no CPU to poll");
}

TEST(IdlePollerTest, ACpuNotAllowedIsNamed) {
  cpu_set_t missing;
  CPU_ZERO(&missing);
  // Beyond any CPU this machine has.
  CPU_SET(CPU_SETSIZE - 1, &missing);
  absl::StatusOr<std::unique_ptr<IdlePoller>> poller =
      IdlePoller::Start(missing);
  ASSERT_FALSE(poller.ok());
  EXPECT_NE(poller.status().message().find(
                "could not run a poller on CPU 1023: sched_setaffinity"),
            std::string::npos)
      << poller.status().message();
}

}  // namespace
}  // namespace aos
