#include "examples/ping_application.h"

#include <cmath>
#include <sstream>

#include "aos/util/json_writer.h"
#include "aos/util/stderr_line.h"

namespace aos::examples {
namespace {

// How long ping waits for its first pong before saying where it looks.
constexpr std::chrono::seconds kNoPongWarning(2);

}  // namespace

PingApplication::PingApplication(EventLoop* event_loop, PingOptions options)
    : event_loop_(event_loop),
      options_(std::move(options)),
      sender_(event_loop->MakeSender<Ping>("/test")) {
  if (options_.count > 0 || options_.duration.count() > 0) {
    stop_ = event_loop_->AddTimer([this]() { event_loop_->Exit(); });
    stop_->set_name("stop: --count/--duration");
  }
  event_loop_->MakeWatcher("/test",
                           [this](const Pong& pong) { Answered(pong); });
  if (options_.phased_loop) {
    PhasedLoopHandler* phased = event_loop_->AddPhasedLoop(
        [this](int) { Send(); },
        std::chrono::duration_cast<monotonic_clock::duration>(options_.period));
    phased->set_name("ping");
    ping_origin_id_ = &phased->timing().origin_id;
  } else {
    TimerHandler* timer = event_loop_->AddTimer([this]() { Send(); });
    timer->set_name("ping");
    ping_origin_id_ = &timer->timing().origin_id;
    event_loop_->OnRun([this, timer]() {
      timer->Schedule(event_loop_->monotonic_now(),
                      std::chrono::duration_cast<monotonic_clock::duration>(
                          options_.period));
    });
  }
  event_loop_->OnRun([this]() {
    started_ = event_loop_->monotonic_now();
    if (options_.duration.count() > 0) {
      stop_->Schedule(event_loop_->monotonic_now() +
                      std::chrono::duration_cast<monotonic_clock::duration>(
                          options_.duration));
    }
  });
}

void PingApplication::Send() {
  const monotonic_clock::time_point now = event_loop_->monotonic_now();
  const Context& context = event_loop_->context();
  wakeup_latency_.Record((now - context.monotonic_event_time).count());
  if (!said_no_pong_ && answers_.answers() == 0 &&
      started_ != monotonic_clock::min_time &&
      now - started_ >= kNoPongWarning) {
    said_no_pong_ = true;
    WriteStderrLine(
        "ping: no pong in %d s: is pong running on %s%s?",
        static_cast<int>(kNoPongWarning.count()), options_.where.c_str(),
        event_loop_->node() != nullptr ? " (and both message bridges)" : "");
  }
  if (options_.count > 0 && answers_.sent() >= options_.count) return;
  auto builder = sender_.MakeBuilder();
  Ping::Builder ping = builder.MakeBuilder<Ping>();
  const int value = answers_.sent() + 1;
  ping.add_value(value);
  ping.add_send_time(now.time_since_epoch().count());
  answers_.Sent(value, now.time_since_epoch().count(),
                context.monotonic_event_time.time_since_epoch().count());
  // Counted, not logged: logging allocates, and a realtime handler must not
  // (--die_on_malloc). The timing reports count them too.
  if (builder.Send(ping.Finish()) != RawSender::Error::kOk) ++send_errors_;
  // The last one: wait a second at most for its answer.
  if (value == options_.count) {
    stop_->Schedule(event_loop_->monotonic_now() + std::chrono::seconds(1));
  }
}

void PingApplication::Answered(const Pong& pong) {
  switch (answers_.Take(pong.value(), pong.initial_send_time())) {
    case PingAnswers::Verdict::kAnswer:
    case PingAnswers::Verdict::kLateAnswer:
      break;
    case PingAnswers::Verdict::kForeign:
      if (answers_.foreign() == 1) {
        WriteStderrLine(
            "ping: a pong answered a ping this ping did not send: another "
            "ping runs on %s; its pongs are not counted",
            options_.where.c_str());
      }
      return;
    case PingAnswers::Verdict::kRepeat:
      if (answers_.repeats() == 1) {
        WriteStderrLine(
            "ping: ping %d was answered twice: more than one pong runs on "
            "%s; repeated answers are not counted",
            pong.value(), options_.where.c_str());
      }
      return;
  }
  const int64_t scheduled = answers_.ScheduledNs(pong.value());
  if (ping_origin_id_ != nullptr && scheduled >= 0) {
    ++origins_checked_;
    bool right = false;
    // Exact on one node; after crossing to another node and back, within
    // the uncertainty of the two translations.
    for (const PathOrigin& origin : event_loop_->context().origins) {
      right |= origin.id == *ping_origin_id_ && origin.hops == 2 &&
               std::abs(origin.monotonic_time_ns - scheduled) <=
                   int64_t{origin.uncertainty_us} * 1000;
    }
    if (!right) ++origins_wrong_;
  }
  const int64_t ns = event_loop_->monotonic_now().time_since_epoch().count() -
                     pong.initial_send_time();
  round_trip_.Add(ns * 1e-9);
  round_trip_histogram_.Record(ns);
  if (options_.count > 0 && pong.value() == options_.count) {
    event_loop_->Exit();
  }
}

std::string PingApplication::SummaryLine() const {
  const bool answered = round_trip_.count() > 0;
  std::ostringstream line;
  line << "ping: " << answers_.sent() << " pings, " << send_errors_
       << " not sent, " << round_trip_.count() << " pongs";
  if (answered) {
    line << ", " << answers_.late()
         << " answered late (after the next ping); round trip avg "
         << round_trip_.average() * 1e6 << " us, p50 "
         << round_trip_histogram_.PercentileNs(50) / 1e3 << " us, p99 "
         << round_trip_histogram_.PercentileNs(99) / 1e3 << " us, max "
         << round_trip_.max() * 1e6 << " us";
  } else {
    line << ": is pong running on " << options_.where
         << (event_loop_->node() != nullptr ? " (and both message bridges)"
                                            : "")
         << "?";
  }
  if (wakeup_latency_.count() > 0) {
    line << "; " << (options_.phased_loop ? "phased loop" : "timer")
         << " wakeup p50 " << wakeup_latency_.PercentileNs(50) / 1e3
         << " us, p99 " << wakeup_latency_.PercentileNs(99) / 1e3 << " us";
  }
  if (answers_.foreign() > 0) {
    line << "; " << answers_.foreign()
         << " pongs of another ping on this --shm_base, not counted";
  }
  if (answers_.repeats() > 0) {
    line << "; " << answers_.repeats()
         << " repeated answers (more than one pong), not counted";
  }
  line << "; origins " << origins_checked_ << " checked, " << origins_wrong_
       << " wrong\n";
  return line.str();
}

std::string PingApplication::SummaryJson() const {
  const bool answered = round_trip_.count() > 0;
  const bool woke = wakeup_latency_.count() > 0;
  // Without a figure there is none: null, not a made-up number.
  auto us = [](bool known, double value) { return known ? value : NAN; };
  JsonWriter json(2);
  json.BeginObject();
  json.Key("pings").Number(answers_.sent());
  json.Key("not_sent").Number(send_errors_);
  json.Key("pongs").Number(round_trip_.count());
  json.Key("answered_late").Number(answers_.late());
  json.Key("foreign_pongs").Number(answers_.foreign());
  json.Key("repeated_pongs").Number(answers_.repeats());
  json.Key("origins_checked").Number(origins_checked_);
  json.Key("origins_wrong").Number(origins_wrong_);
  json.Key("round_trip_us").BeginObject();
  json.Key("avg").Number(us(answered, round_trip_.average() * 1e6));
  json.Key("p50").Number(
      us(answered, round_trip_histogram_.PercentileNs(50) / 1e3));
  json.Key("p99").Number(
      us(answered, round_trip_histogram_.PercentileNs(99) / 1e3));
  json.Key("max").Number(us(answered, round_trip_.max() * 1e6));
  json.EndObject();
  json.Key("timer_wakeup_us").BeginObject();
  json.Key("p50").Number(us(woke, wakeup_latency_.PercentileNs(50) / 1e3));
  json.Key("p99").Number(us(woke, wakeup_latency_.PercentileNs(99) / 1e3));
  json.Key("max").Number(us(woke, wakeup_latency_.max_ns() / 1e3));
  json.EndObject();
  json.EndObject();
  return std::string(json.Text());
}

}  // namespace aos::examples
