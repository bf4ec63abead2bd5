#include "aos/tools/origin_lines.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "aos/events/path_origins.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {

void OriginNames::Add(uint32_t id, std::string_view kind, std::string_view name,
                      const timing::ReportHeader& header) {
  if (id == 0) {
    id = PathOriginId(header.node, header.name,
                      kind == "timer" ? "timer" : "phased_loop", name);
  }
  if (names_.contains(id)) return;
  std::string text = StrCat(kind, " ", InlinePrintable(name), " of ",
                            InlinePrintable(header.name));
  if (!header.node.empty())
    text += StrCat(" on ", InlinePrintable(header.node));
  names_.emplace(id, std::move(text));
}

void OriginNames::AddReport(const timing::ReportContents& report) {
  for (const timing::TimerTiming& timer : report.timers) {
    Add(timer.origin_id, "timer", timer.name, report.header);
  }
  for (const timing::TimerTiming& phased_loop : report.phased_loops) {
    Add(phased_loop.origin_id, "phased loop", phased_loop.name, report.header);
  }
}

std::string_view OriginNames::Describe(uint32_t id) const {
  auto found = names_.find(id);
  return found == names_.end() ? std::string_view() : found->second;
}

std::string OriginLines(const Context& context, std::string_view unknown,
                        const OriginNames& names) {
  if (!unknown.empty()) return StrCat("  origins unknown (", unknown, ")\n");
  if (context.origins.empty() && context.origins.dropped() == 0) {
    return "  no origins\n";
  }
  std::ostringstream out;
  const int64_t sent = context.monotonic_event_time.time_since_epoch().count();
  for (const PathOrigin& origin : context.origins) {
    char id[16];
    std::snprintf(id, sizeof(id), "0x%08" PRIx32, origin.id);
    out << "  origin " << id;
    const std::string_view name = names.Describe(origin.id);
    if (!name.empty()) out << " (" << name << ")";
    // Age in us with ns precision; the division keeps the sign.
    const int64_t age_ns = sent - origin.monotonic_time_ns;
    const int64_t whole = age_ns / 1000;
    const int64_t fraction = age_ns % 1000;
    char age[48];
    std::snprintf(age, sizeof(age), "%s%" PRId64 ".%03" PRId64,
                  age_ns < 0 && whole == 0 ? "-" : "", whole,
                  fraction < 0 ? -fraction : fraction);
    out << ": hops " << origin.hops << ", time "
        << monotonic_clock::time_point(
               std::chrono::nanoseconds(origin.monotonic_time_ns))
        << ", age " << age << " us ±" << origin.uncertainty_us << " us\n";
  }
  if (context.origins.dropped() > 0) {
    out << "  " << context.origins.dropped()
        << " more origins dropped on the way (no room)\n";
  }
  return out.str();
}

}  // namespace aos
