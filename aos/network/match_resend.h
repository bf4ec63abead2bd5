#ifndef AOS_NETWORK_MATCH_RESEND_H_
#define AOS_NETWORK_MATCH_RESEND_H_

// What a reliable forwarded channel's writer re-sends when a peer's reader
// newly matches it (a peer bridge started or restarted): readers are
// volatile, so without a re-send a peer that joins late would never get the
// message that was newest when it joined.
//
// Only the newest message the bridge has already made available is
// re-sent: the last one its watcher forwarded, or, before the watcher
// forwarded any, the newest in the queue when the loop started. When the
// queue already holds newer messages the watcher has not reached yet, there
// is nothing to re-send: the watcher forwards them, in order, to the new
// reader too. Re-sending the newest then would put it ahead of the ones
// between, and the peer would drop those as older than what it has (a gap
// in a reliable channel).
//
//   MatchResend resend;
//   resend.MadeAvailable(fetcher.context().queue_index);  // at Run(), if any
//   resend.MadeAvailable(context.queue_index);            // each forward
//   fetcher.Fetch();                                       // on a match
//   if (resend.ShouldResend(fetcher.context().queue_index)) Forward(...);
//
// Never allocates.

#include <cstdint>

namespace aos::message_bridge {

class MatchResend {
 public:
  // The message at `queue_index` was forwarded (or was the newest when the
  // loop started): every reader matched from now on may have missed it.
  void MadeAvailable(uint32_t queue_index) {
    has_available_ = true;
    available_queue_index_ = queue_index;
  }

  // Whether the newest message in the queue, at `newest_queue_index`, is to
  // be re-sent to a reader that just matched: only if it is the one last
  // made available. Any number of matches re-send it again (a peer that
  // restarted twice needs it twice; the peer drops copies it has).
  bool ShouldResend(uint32_t newest_queue_index) const {
    return has_available_ && newest_queue_index == available_queue_index_;
  }

 private:
  bool has_available_ = false;
  uint32_t available_queue_index_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_MATCH_RESEND_H_
