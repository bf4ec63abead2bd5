#ifndef EXAMPLES_PONG_APPLICATION_H_
#define EXAMPLES_PONG_APPLICATION_H_

// pong as a class over any event loop: a watcher on /test aos.examples.Ping
// answers each one with an aos.examples.Pong carrying its value and send
// time. examples/pong.cc runs it on shared memory; tests run it in
// simulation.
//
//   PongApplication pong(event_loop.get());
//   ...  // run the loop
//   pong.answered();

#include <cstdint>

#include "aos/events/event_loop.h"
#include "examples/pong_generated.h"

namespace aos::examples {

class PongApplication {
 public:
  // Makes its sender and watcher on `event_loop`, which must outlive it and
  // not be running yet.
  explicit PongApplication(EventLoop* event_loop);
  PongApplication(const PongApplication&) = delete;
  PongApplication& operator=(const PongApplication&) = delete;

  // Pings answered, and answers whose send failed (kMessagesSentTooFast or a
  // damaged queue; its timing reports count them too).
  int64_t answered() const { return answered_; }
  int64_t not_sent() const { return not_sent_; }

 private:
  Sender<Pong> sender_;
  int64_t answered_ = 0;
  int64_t not_sent_ = 0;
};

}  // namespace aos::examples

#endif  // EXAMPLES_PONG_APPLICATION_H_
