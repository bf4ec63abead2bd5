#ifndef AOS_TOOLS_ORIGIN_LINES_H_
#define AOS_TOOLS_ORIGIN_LINES_H_

// What aos_dump --origins (-v) prints under a message: one line per path
// origin it carried (docs/aos_dump.md), naming the timer or phased loop an
// id stands for where timing reports say.
//
//   OriginNames names;
//   names.AddReport(report);   // each aos.timing.Report of a log, decoded
//   std::cout << message_line << OriginLines(context, "", names);
//
//   origin 0x6b2f3a10 (timer ping of ping): hops 1, time 12.010000000sec,
//       age 0.000 us ±0 us          <- one line
//
// Names come from reports, which a log's writer controls: they are escaped
// for a terminal (aos::InlinePrintable). Allocates; for tools.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "aos/events/event_loop.h"
#include "aos/events/timing_report_codec.h"

namespace aos {

// Origin ids and the callbacks they stand for, learnt from timing reports.
class OriginNames {
 public:
  // Learns the id of each timer and phased loop `report` lists: its
  // Timer.origin_id, or, where a report has none (0), the PathOriginId of
  // its node, application, kind and name, which is what the loop uses. An
  // id already named keeps its first name.
  void AddReport(const timing::ReportContents& report);
  // "timer ping of ping", "phased loop poll of aos_logger on pi2"; empty
  // for an id no report named.
  std::string_view Describe(uint32_t id) const;
  size_t size() const { return names_.size(); }

 private:
  void Add(uint32_t id, std::string_view kind, std::string_view name,
           const timing::ReportHeader& header);

  std::map<uint32_t, std::string> names_;
};

// The lines for the origins of the message `context` describes, each "  "
// and a text and "\n": one per origin (its id in hex, its name if `names`
// has it, hops, its time, its age at the message's monotonic send time and
// its uncertainty), then how many were dropped on the way, if any. A
// message with none: "  no origins". If `unknown` is not empty the
// origins are unknown, and the one line says so with `unknown` as the
// reason.
std::string OriginLines(const Context& context, std::string_view unknown,
                        const OriginNames& names);

}  // namespace aos

#endif  // AOS_TOOLS_ORIGIN_LINES_H_
