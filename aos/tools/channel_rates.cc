#include "aos/tools/channel_rates.h"

#include <cmath>
#include <cstdio>
#include <span>
#include <sstream>

#include "aos/configuration_lookup.h"
#include "aos/events/timing_report_codec.h"
#include "aos/tools/aos_dump_channel.h"
#include "aos/util/plain_table.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// `value` with 3 significant digits, as the streamer's figures.
std::string ThreeDigits(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  snprintf(text, sizeof(text), "%.3g", value);
  // %g writes 1e+03 for 1000: plain numbers read better in a table.
  if (std::string_view(text).find('e') != std::string_view::npos) {
    snprintf(text, sizeof(text), "%.0f", value);
  }
  return text;
}

}  // namespace

ChannelRates::ChannelRates(EventLoop* loop) : loop_(loop) {
  const Configuration& config = *loop_->configuration();
  if (config.channels() != nullptr) {
    int index = -1;
    for (const Channel* channel : *config.channels()) {
      ++index;
      if (!configuration::ChannelIsReadableOnNode(*channel, loop_->node())) {
        continue;
      }
      watched_.push_back({.channel = channel,
                          .index = index,
                          .fetcher = loop_->MakeRawFetcher(channel)});
      // Every node's timing reports that reach this node name senders.
      if (channel->type()->string_view() == "aos.timing.Report") {
        reports_.push_back(loop_->MakeRawFetcher(channel));
      }
    }
  }
  loop_->OnRun([this]() { Poll(); });
}

void ChannelRates::Poll() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  if (!first_poll_.has_value()) first_poll_ = now;
  last_poll_ = now;
  for (Watched& watched : watched_) {
    const bool any = watched.fetcher->Fetch();
    if (any) watched.last_index = watched.fetcher->context().queue_index;
    if (!watched.polled) {
      watched.polled = true;
      watched.first_index = watched.last_index;
    }
  }
  const int channels = loop_->configuration()->channels() == nullptr
                           ? 0
                           : loop_->configuration()->channels()->size();
  for (const std::unique_ptr<RawFetcher>& fetcher : reports_) {
    while (fetcher->FetchNext()) {
      const Context& context = fetcher->context();
      // Anyone can send on /aos: a report that does not decode names no
      // one.
      absl::StatusOr<timing::ReportContents> report =
          timing::DecodeTimingReport(std::span<const uint8_t>(
              static_cast<const uint8_t*>(context.data), context.size));
      if (!report.ok()) continue;
      Application& application = applications_[{
          report->header.node, report->header.name, report->header.pid}];
      application.sent = context.monotonic_event_time;
      application.sender_channels.clear();
      for (const timing::SenderTiming& sender : report->senders) {
        if (sender.channel_index >= 0 && sender.channel_index < channels) {
          application.sender_channels.push_back(sender.channel_index);
        }
      }
    }
  }
}

std::vector<ChannelRates::Row> ChannelRates::Rows() const {
  std::map<int, std::set<std::string>> senders;
  for (const auto& [key, application] : applications_) {
    if (last_poll_ - application.sent > kSenderReportAge) continue;
    const auto& [node, name, pid] = key;
    const std::string who = node.empty() ? InlinePrintable(name)
                                         : StrCat(InlinePrintable(node), " ",
                                                  InlinePrintable(name));
    for (int index : application.sender_channels) senders[index].insert(who);
  }
  const double seconds =
      first_poll_.has_value()
          ? std::chrono::duration<double>(last_poll_ - *first_poll_).count()
          : 0;
  std::vector<Row> rows;
  for (const Watched& watched : watched_) {
    Row row{.channel = watched.channel};
    if (watched.last_index.has_value()) {
      // Indices count modulo 2^32; nothing before the first poll is
      // counted, and without one then, messages [0, last] came after it.
      row.messages = watched.first_index.has_value()
                         ? static_cast<uint32_t>(*watched.last_index -
                                                 *watched.first_index)
                         : static_cast<uint64_t>(*watched.last_index) + 1;
      row.total = static_cast<uint64_t>(*watched.last_index) + 1;
      row.last_sent = watched.fetcher->context().monotonic_event_time;
      row.size = watched.fetcher->context().size;
    }
    row.rate_hz = seconds > 0 ? static_cast<double>(row.messages) / seconds
                              : std::nan("");
    auto it = senders.find(watched.index);
    if (it != senders.end()) row.senders = it->second;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string ChannelRates::Render(monotonic_clock::time_point now) const {
  const std::vector<Row> rows = Rows();
  const double seconds =
      first_poll_.has_value()
          ? std::chrono::duration<double>(last_poll_ - *first_poll_).count()
          : 0;
  std::ostringstream out;
  out << rows.size() << (rows.size() == 1 ? " channel" : " channels")
      << " readable"
      << (loop_->node() == nullptr
              ? std::string()
              : StrCat(" on node ",
                       InlinePrintable(loop_->node()->name()->string_view())))
      << ", watched for " << StrCat(ThreeDigits(seconds)) << " s\n";
  PlainTable table(PlainTable::LastColumn::kLeft);
  table.AddRow(
      {"channel", "rate/s", "messages", "total", "last", "size", "senders"});
  for (const Row& row : rows) {
    std::string senders = StrJoin(row.senders, ", ");
    table.AddRow(
        {DescribeDumpChannel(*row.channel), ThreeDigits(row.rate_hz),
         StrCat(row.messages),
         row.total.has_value() ? StrCat(*row.total) : std::string("-"),
         row.last_sent.has_value()
             ? StrCat(ThreeDigits(
                          std::chrono::duration<double>(now - *row.last_sent)
                              .count()),
                      " s ago")
             : std::string("never"),
         row.last_sent.has_value() ? StrCat(row.size, " B") : std::string("-"),
         senders.empty() ? std::string("-") : senders});
  }
  table.Print(&out);
  return out.str();
}

}  // namespace aos
