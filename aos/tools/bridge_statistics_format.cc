#include "aos/tools/bridge_statistics_format.h"

#include <cmath>
#include <sstream>

#include "aos/events/timing_histogram.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/plain_table.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
std::string FormatClientStatistics(
    const message_bridge::ClientStatistics& statistics, std::string_view node,
    TimeUnit unit) {
  std::ostringstream out;
  out << "network into " << (node.empty() ? "this node" : node)
      << " (message_bridge): clock offset and one-way latency in "
      << TimeUnitName(unit) << "\n";
  PlainTable table;
  table.AddRow({"from", "state", "received", "lost", "dup", "dropped",
                "reboots", "disc", "offset", "uncert", "latency n", "min",
                "p50", "p99", "p99.9", "max"});
  if (statistics.connections() != nullptr) {
    for (const message_bridge::ClientConnection* c :
         *statistics.connections()) {
      const uint64_t dropped = c->dropped_unknown_channel() +
                               c->dropped_oversize() + c->dropped_invalid() +
                               c->dropped_send_failed();
      const bool has_offset = c->monotonic_offset_uncertainty() >= 0;
      // Node names come from whoever sent the statistics (shared memory, a
      // log, a peer): never raw to the terminal.
      std::vector<std::string> row = {
          InlinePrintable(StringView(c->node())),
          message_bridge::EnumNameState(c->state()),
          StrCat(c->received_packets()),
          StrCat(c->lost_packets()),
          StrCat(c->duplicate_packets()),
          StrCat(dropped),
          StrCat(c->reboots()),
          StrCat(c->disconnects()),
          has_offset
              ? FormatDuration(static_cast<double>(c->monotonic_offset()), unit)
              : "-",
          has_offset ? FormatDuration(static_cast<double>(
                                          c->monotonic_offset_uncertainty()),
                                      unit)
                     : "-"};
      timing::LatencyHistogram histogram;
      std::string why;
      const bool decoded =
          c->one_way_latency_histogram() != nullptr &&
          timing::LatencyHistogram::Decode(*c->one_way_latency_histogram(),
                                           &histogram, &why);
      if (decoded && histogram.count() > 0) {
        row.push_back(StrCat(histogram.count()));
        row.push_back(
            FormatDuration(static_cast<double>(histogram.min_ns()), unit));
        for (double percentile : {50.0, 99.0, 99.9}) {
          row.push_back(FormatDuration(
              static_cast<double>(histogram.PercentileNs(percentile)), unit));
        }
        row.push_back(
            FormatDuration(static_cast<double>(histogram.max_ns()), unit));
      } else {
        row.insert(row.end(), {"0", "-", "-", "-", "-", "-"});
      }
      table.AddRow(std::move(row));
    }
  }
  table.Print(&out);
  if (statistics.connections() != nullptr) {
    for (const message_bridge::ClientConnection* c :
         *statistics.connections()) {
      const std::string name = InlinePrintable(StringView(c->node()));
      if (c->refused_reboots() > 0) {
        out << "  reboots of " << name
            << " not believed (more than 3 a minute: forged probes?): "
            << c->refused_reboots() << "\n";
      }
      if (c->invalid_origins() > 0) {
        out << "  path origins from " << name
            << " dropped as impossible (forged or damaged?): "
            << c->invalid_origins() << "\n";
      }
      if (c->paced_packets() > 0) {
        out << "  messages from " << name
            << " that came faster than their channel takes them and waited "
               "(paced; in the latency): "
            << c->paced_packets() << "\n";
      }
      if (c->origins_without_offset() > 0) {
        out << "  path origins from " << name
            << " dropped before a clock offset estimate: "
            << c->origins_without_offset() << "\n";
      }
    }
  }
  if (statistics.dropped_unknown_node() > 0) {
    out << "  dropped from no node of the configuration: "
        << statistics.dropped_unknown_node() << "\n";
  }
  return out.str();
}

}  // namespace aos
