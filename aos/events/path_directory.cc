#include "aos/events/path_directory.h"

#include <algorithm>
#include <cstdio>

#include "aos/events/channel_description.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

constexpr std::string_view kArrow = " → ";

std::string OneOf(const std::vector<std::string>& names) {
  return names.size() == 1 ? names[0]
                           : StrCat("one of: ", StrJoin(names, ", "));
}

}  // namespace

std::vector<PathEntry> PathEntriesOf(const timing::ReportContents& report) {
  std::vector<PathEntry> entries;
  for (const timing::WatcherTiming& watcher : report.watchers) {
    entries.push_back({"watcher", watcher.channel_index, &watcher.paths});
  }
  for (const timing::FetcherTiming& fetcher : report.fetchers) {
    entries.push_back({"fetcher", fetcher.channel_index, &fetcher.paths});
  }
  return entries;
}

std::vector<ReportPath> PathsOf(const timing::ReportContents& report) {
  std::vector<ReportPath> paths;
  for (const PathEntry& entry : PathEntriesOf(report)) {
    for (const timing::PathTiming& path : *entry.paths) {
      paths.push_back({entry.kind, entry.channel_index, entry.paths, &path});
    }
  }
  return paths;
}

PathDirectory::PathDirectory(const Configuration* config)
    : config_(config),
      multi_node_(config->nodes() != nullptr && config->nodes()->size() > 0) {}

void PathDirectory::Learn(const timing::ReportContents& report) {
  const std::pair<std::string, std::string> key = {report.header.node,
                                                   report.header.name};
  auto it = loops_.find(key);
  if (it == loops_.end()) {
    if (loops_.size() >= kMaxLoops) {
      ++ignored_reports_;
      return;
    }
    it = loops_.emplace(key, Loop{}).first;
  }
  Loop& loop = it->second;
  loop = Loop();
  loop.node = key.first;
  loop.name = key.second;
  for (const auto& [kind, timers] :
       {std::pair{"timer", &report.timers},
        std::pair{"phased loop", &report.phased_loops}}) {
    for (const timing::TimerTiming& timer : *timers) {
      if (timer.origin_id == 0) continue;
      loop.origins.push_back({timer.origin_id, kind, timer.name});
    }
  }
  for (const timing::SenderTiming& sender : report.senders) {
    for (const timing::SentOriginCount& sent : sender.sent_origins) {
      if (sent.count == 0) continue;
      loop.sent.push_back({sender.channel_index, sent.origin_id, sent.hops});
    }
  }
  for (const ReportPath& path : PathsOf(report)) {
    loop.received.push_back(
        {path.channel_index, path.path->origin_id, path.path->hops});
  }
}

std::string PathDirectory::LoopName(std::string_view node,
                                    std::string_view name) const {
  if (!multi_node_ || node.empty()) return InlinePrintable(name);
  return StrCat(InlinePrintable(node), " ", InlinePrintable(name));
}

std::string PathDirectory::ChannelName(int channel_index) const {
  return InlinePrintable(DescribeChannel(*config_, channel_index));
}

std::string PathDirectory::Origin(uint32_t origin_id) const {
  std::vector<std::string> names;
  for (const auto& [key, loop] : loops_) {
    for (const OriginName& origin : loop.origins) {
      if (origin.id != origin_id) continue;
      names.push_back(StrCat(LoopName(loop.node, loop.name), " ", origin.kind,
                             " ", Printable(origin.name)));
    }
  }
  if (names.empty()) {
    return StrCat("origin ", FormatOriginId(origin_id), " (no report seen)");
  }
  return OneOf(names);
}

std::vector<const PathDirectory::Loop*> PathDirectory::Senders(
    int channel_index, uint32_t origin_id, uint32_t hops) const {
  std::vector<const Loop*> senders;
  for (const auto& [key, loop] : loops_) {
    if (std::any_of(loop.sent.begin(), loop.sent.end(), [&](const Hop& hop) {
          return hop.channel_index == channel_index &&
                 hop.origin_id == origin_id && hop.hops == hops;
        })) {
      senders.push_back(&loop);
    }
  }
  // A forwarded channel is sent again on each node it reaches: the loop on
  // its source node sent it first.
  const Channel* channel = ChannelAt(*config_, channel_index);
  if (multi_node_ && channel != nullptr && channel->source_node() != nullptr) {
    const std::string_view source = channel->source_node()->string_view();
    std::vector<const Loop*> on_source;
    for (const Loop* loop : senders) {
      if (loop->node == source) on_source.push_back(loop);
    }
    if (!on_source.empty()) return on_source;
  }
  return senders;
}

std::vector<int> PathDirectory::ReceivedOn(const Loop& loop, uint32_t origin_id,
                                           uint32_t hops) {
  std::vector<int> channels;
  for (const Hop& hop : loop.received) {
    if (hop.origin_id == origin_id && hop.hops == hops &&
        std::find(channels.begin(), channels.end(), hop.channel_index) ==
            channels.end()) {
      channels.push_back(hop.channel_index);
    }
  }
  return channels;
}

std::string PathDirectory::Route(const PathEnd& end, uint32_t origin_id,
                                 uint32_t hops) const {
  // Built from the end back to the origin, then reversed.
  std::vector<std::string> pieces = {
      StrCat(LoopName(end.node, end.loop), " ", end.kind),
      ChannelName(end.channel_index)};
  // The channel the walk stands at carried (origin, hops); messages before
  // the first named piece that no report accounts for.
  int channel_index = end.channel_index;
  uint64_t unnamed = hops == 0 ? 0 : hops - 1;
  for (uint32_t k = hops; k > 1; --k) {
    const std::vector<const Loop*> senders =
        Senders(channel_index, origin_id, k);
    if (senders.empty()) break;
    std::vector<std::string> names;
    for (const Loop* loop : senders) {
      names.push_back(LoopName(loop->node, loop->name));
    }
    pieces.push_back(OneOf(names));
    if (senders.size() > 1) break;
    const std::vector<int> channels = ReceivedOn(*senders[0], origin_id, k - 1);
    if (channels.empty()) break;
    names.clear();
    for (int channel : channels) names.push_back(ChannelName(channel));
    pieces.push_back(OneOf(names));
    // Named: the message with k - 1 hops; those before it are not yet.
    unnamed = k - 2;
    if (channels.size() > 1) break;
    channel_index = channels[0];
  }
  if (unnamed > 0 || hops == 0)
    pieces.push_back(StrCat("? (", FormatHops(unnamed), ")"));
  pieces.push_back(Origin(origin_id));
  std::reverse(pieces.begin(), pieces.end());
  return StrJoin(pieces, kArrow);
}

std::string FormatHops(uint64_t hops) {
  return StrCat(hops, hops == 1 ? " hop" : " hops");
}

std::string FormatOriginId(uint32_t origin_id) {
  char text[16];
  snprintf(text, sizeof(text), "0x%08x", origin_id);
  return text;
}

std::string UnresolvedPath(uint32_t origin_id, uint32_t hops) {
  return StrCat("origin ", FormatOriginId(origin_id), " (", FormatHops(hops),
                ")");
}

std::string DescribePath(const PathDirectory* directory,
                         const timing::ReportHeader& header,
                         const ReportPath& path) {
  if (directory == nullptr) {
    return UnresolvedPath(path.path->origin_id, path.path->hops);
  }
  return directory->Route({.node = header.node,
                           .loop = header.name,
                           .kind = path.kind,
                           .channel_index = path.channel_index},
                          path.path->origin_id, path.path->hops);
}

}  // namespace aos
