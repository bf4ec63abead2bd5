// netdelay: a network link's delay (and loss) in user space, for kernels
// without tc netem. iptables sends the packets to an NFQUEUE queue; netdelay
// reads them and gives each its ACCEPT verdict --delay_ms after it arrived,
// in arrival order, or drops it (--loss_percent, seeded, per packet index).
// tools/netns_pair.sh starts one per namespace; docs/network.md.
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "aos/events/timing_histogram.h"
#include "aos/init.h"
#include "aos/time/time.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/netdelay/delay_line.h"
#include "tools/netdelay/seeded_loss.h"

DEFINE_int32(queue, 0,
             "The NFQUEUE queue number to read (iptables -j NFQUEUE "
             "--queue-num N), 0-65535.");
DEFINE_double(delay_ms, 0,
              "Accept each packet this many milliseconds after it arrived "
              "(fractions allowed).");
DEFINE_double(loss_percent, 0,
              "Drop this share of the packets, 0-100: the i-th packet is "
              "dropped by a pure function of (--seed, i).");
DEFINE_uint64(seed, 1, "Seed of the --loss_percent decisions.");
DEFINE_int32(queue_maxlen, 10000,
             "Packets the kernel may hold for us before it drops new ones.");
DEFINE_int32(rcvbuf_bytes, 8 << 20,
             "Netlink socket receive buffer; packets that do not fit are "
             "dropped by the kernel.");
DEFINE_int32(priority, 0,
             "Run at SCHED_FIFO priority N (1-99) so verdicts are on time "
             "under load; 0: normal scheduling.");

namespace aos::netdelay {
namespace {

struct Counts {
  uint64_t delayed = 0;
  uint64_t dropped = 0;
  // Given a verdict at once because the line was full (cannot happen while
  // --queue_maxlen bounds what the kernel hands us; counted to be sure).
  uint64_t overflowed = 0;
  // recv() said ENOBUFS (NETLINK_NO_ENOBUFS should prevent it; the kernel's
  // own user_dropped count is the one that tells).
  uint64_t enobufs = 0;
};

struct State {
  nfq_q_handle* queue = nullptr;
  DelayLine* line = nullptr;
  const SeededLoss* loss = nullptr;
  monotonic_clock::duration delay{};
  uint64_t next_index = 0;
  Counts counts;
  // How long after its deadline each packet got its verdict: netdelay's own
  // error (wakeup latency); the time from the kernel queueing a packet to
  // our reading it comes on top, unmeasured.
  timing::LatencyHistogram late;
};

void SetVerdict(nfq_q_handle* queue, uint32_t id, uint32_t verdict) {
  // A failed verdict leaves the packet queued in the kernel until the queue
  // is destroyed: our bug or a dying kernel queue, never the user's.
  PCHECK(nfq_set_verdict(queue, id, verdict, 0, nullptr) >= 0)
      << ": verdict for packet " << id;
}

int OnPacket(nfq_q_handle* queue, nfgenmsg*, nfq_data* data, void* opaque) {
  State& state = *static_cast<State*>(opaque);
  const monotonic_clock::time_point arrival = monotonic_clock::now();
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  CHECK(header != nullptr) << ": the kernel sent a packet without a header";
  const uint32_t id = ntohl(header->packet_id);
  if (state.loss->Drops(state.next_index++)) {
    SetVerdict(queue, id, NF_DROP);
    ++state.counts.dropped;
  } else if (state.line->Push(id, arrival + state.delay)) {
    ++state.counts.delayed;
  } else {
    SetVerdict(queue, id, NF_ACCEPT);
    ++state.counts.overflowed;
  }
  return 0;
}

// Accepts every held packet due by `now`, oldest first; `on_time` records
// how late each is (not when the exit flushes the line).
void Release(State& state, monotonic_clock::time_point now, bool on_time) {
  while (!state.line->empty() && state.line->front().deadline <= now) {
    if (on_time)
      state.late.Record((now - state.line->front().deadline).count());
    SetVerdict(state.queue, state.line->front().id, NF_ACCEPT);
    state.line->Pop();
  }
}

// Arms `timer_fd` for the front packet's deadline (absolute, CLOCK_MONOTONIC
// like aos::monotonic_clock), or disarms it when nothing is held. Setting it
// also clears an expiry nobody read, so poll() stops reporting it.
void Arm(int timer_fd, const DelayLine& line) {
  itimerspec spec{};
  if (!line.empty()) {
    spec.it_value = ToTimespec(line.front().deadline.time_since_epoch());
    // {0, 0} would disarm; a deadline at the epoch is already due anyway.
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) {
      spec.it_value.tv_nsec = 1;
    }
  }
  PCHECK(timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr) == 0);
}

// The kernel's own counts for our queue from /proc/net/netfilter/
// nfnetlink_queue ("queue_dropped" when the queue was full, "user_dropped"
// when our socket was), or "" if it does not list the queue.
std::string KernelDrops(int queue_number) {
  std::ifstream file("/proc/net/netfilter/nfnetlink_queue");
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    long number, portid, total, mode, range, queue_dropped, user_dropped;
    if (fields >> number >> portid >> total >> mode >> range >> queue_dropped >>
            user_dropped &&
        number == queue_number) {
      return StrCat(", kernel dropped ", queue_dropped, " (queue full) and ",
                    user_dropped, " (socket full)");
    }
  }
  return "";
}

// "; verdicts late by p50 A us, p99 B us, max C us", or "" before any.
std::string Lateness(const timing::LatencyHistogram& late) {
  if (late.count() == 0) return "";
  return StrCat("; verdicts late by p50 ", late.PercentileNs(50) / 1e3,
                " us, p99 ", late.PercentileNs(99) / 1e3, " us, max ",
                late.max_ns() / 1e3, " us");
}

void CheckFlags() {
  ExitOnFlagError(CheckInRange("--queue", FLAGS_queue, 0, 65535));
  ExitOnFlagError(CheckInRange("--delay_ms", FLAGS_delay_ms, 0.0, 1e6,
                               " is not a number of milliseconds 0-1000000"));
  ExitOnFlagError(
      CheckInRange("--loss_percent", FLAGS_loss_percent, 0.0, 100.0));
  ExitOnFlagError(CheckAtLeast("--queue_maxlen", FLAGS_queue_maxlen, 1));
  ExitOnFlagError(CheckAtLeast("--rcvbuf_bytes", FLAGS_rcvbuf_bytes, 4096,
                               " is less than 4096"));
  ExitOnFlagError(CheckInRange("--priority", FLAGS_priority, 0, 99));
}

int Main() {
  CheckFlags();
  if (FLAGS_priority > 0) {
    sched_param param{.sched_priority = FLAGS_priority};
    if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      ExitForUserError(StrCat("--priority=", FLAGS_priority, ": ",
                              strerror(errno),
                              " (needs root or CAP_SYS_NICE)"));
    }
  }
  // The default 50 us of timer slack would be most of a small delay's error.
  PCHECK(prctl(PR_SET_TIMERSLACK, 1) == 0);

  // SIGTERM/SIGINT arrive through a file descriptor, so the loop ends between
  // two packets and can still accept what it holds.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  PCHECK(sigprocmask(SIG_BLOCK, &signals, nullptr) == 0);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  PCHECK(signal_fd >= 0);
  const int timer_fd =
      timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  PCHECK(timer_fd >= 0);

  nfq_handle* handle = nfq_open();
  if (handle == nullptr) {
    ExitForUserError(StrCat("--queue=", FLAGS_queue,
                            ": cannot open netfilter queue netlink: ",
                            strerror(errno), " (needs root or CAP_NET_ADMIN)"));
  }
  DelayLine line(FLAGS_queue_maxlen);
  const SeededLoss loss(FLAGS_loss_percent, FLAGS_seed);
  State state;
  state.line = &line;
  state.loss = &loss;
  state.delay = std::chrono::duration_cast<monotonic_clock::duration>(
      std::chrono::duration<double, std::milli>(FLAGS_delay_ms));
  state.queue = nfq_create_queue(handle, FLAGS_queue, &OnPacket, &state);
  if (state.queue == nullptr) {
    ExitForUserError(StrCat("--queue=", FLAGS_queue,
                            ": cannot bind: ", strerror(errno),
                            " (is another program reading it? needs root "
                            "or CAP_NET_ADMIN)"));
  }
  // Only the packet id matters for a verdict: copy no payload.
  PCHECK(nfq_set_mode(state.queue, NFQNL_COPY_META, 0) >= 0);
  if (nfq_set_queue_maxlen(state.queue, FLAGS_queue_maxlen) < 0) {
    ExitForUserError(StrCat("--queue_maxlen=", FLAGS_queue_maxlen,
                            ": the kernel refused it: ", strerror(errno)));
  }
  const int netlink_fd = nfq_fd(handle);
  nfnl_rcvbufsiz(nfq_nfnlh(handle), FLAGS_rcvbuf_bytes);
  // No ENOBUFS from recv when the socket overflowed: the kernel drops those
  // packets and counts them itself (user_dropped, printed at exit).
  const int one = 1;
  setsockopt(netlink_fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));

  // tools/netns_pair.sh waits for this line before it sends packets here.
  std::cerr << "netdelay: queue " << FLAGS_queue << " ready: delay "
            << FLAGS_delay_ms << " ms, loss " << FLAGS_loss_percent
            << "% (seed " << FLAGS_seed << ")" << std::endl;

  alignas(nlmsghdr) static char buffer[1 << 16];
  pollfd fds[3] = {{.fd = netlink_fd, .events = POLLIN, .revents = 0},
                   {.fd = timer_fd, .events = POLLIN, .revents = 0},
                   {.fd = signal_fd, .events = POLLIN, .revents = 0}};
  bool running = true;
  while (running) {
    if (poll(fds, 3, -1) < 0) {
      PCHECK(errno == EINTR);
      continue;
    }
    if (fds[2].revents & POLLIN) running = false;
    if (fds[0].revents & POLLIN) {
      while (true) {
        const ssize_t size =
            recv(netlink_fd, buffer, sizeof(buffer), MSG_DONTWAIT);
        if (size < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          if (errno == ENOBUFS) {
            ++state.counts.enobufs;
            continue;
          }
          PLOG(FATAL) << "recv from the netfilter queue";
        }
        nfq_handle_packet(handle, buffer, static_cast<int>(size));
      }
    }
    Release(state, running ? monotonic_clock::now() : monotonic_clock::max_time,
            running);
    Arm(timer_fd, line);
  }

  const std::string kernel = KernelDrops(FLAGS_queue);
  nfq_destroy_queue(state.queue);
  nfq_close(handle);
  std::cerr << "netdelay: queue " << FLAGS_queue << ": delayed "
            << state.counts.delayed << ", dropped " << state.counts.dropped
            << ", passed at once (line full) " << state.counts.overflowed
            << ", socket overflows " << state.counts.enobufs << kernel
            << Lateness(state.late) << std::endl;
  return 0;
}

}  // namespace
}  // namespace aos::netdelay

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: netdelay --queue=N --delay_ms=MS [--loss_percent=P] [--seed=S]\n"
      "Delays every packet iptables sends to NFQUEUE queue N by MS\n"
      "milliseconds (in arrival order), dropping P% of them, e.g.\n"
      "  iptables-legacy -t mangle -A POSTROUTING -o eth1 -j NFQUEUE "
      "--queue-num 1\n"
      "  netdelay --queue=1 --delay_ms=2\n"
      "For kernels without tc netem; tools/netns_pair.sh starts it. Stop\n"
      "with SIGTERM or Ctrl-C: held packets are accepted at once and the\n"
      "counts are printed on stderr. Needs root (CAP_NET_ADMIN).\n"
      "docs/network.md.");
  aos::RefuseArguments(argc, argv);
  return aos::netdelay::Main();
}
