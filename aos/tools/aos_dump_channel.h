#ifndef AOS_TOOLS_AOS_DUMP_CHANNEL_H_
#define AOS_TOOLS_AOS_DUMP_CHANNEL_H_

// Which channel `aos_dump CHANNEL [TYPE]` prints: the rule of AOS's
// aos_dump, with its fatal cases turned into one-line errors.
//
//   absl::StatusOr<const aos::Channel*> channel =
//       aos::FindDumpChannel(config, "/aos", "Report", pi1);
//   // On pi1 of a config mapping /aos* to /pi1/aos: /pi1/aos
//   // aos.timing.Report.
//
// The name: a channel matches when `name` maps to its name on `node`
// through the config's maps (configuration::MapChannelName with the
// channel's type and no application, as AOS's aos_dump resolves aliases),
// so "/aos" finds "/pi1/aos" on pi1. A channel's own name matches unless a
// map sends it elsewhere.
//
// The type: among the channels the name matches, those whose type is
// exactly `type`; if none is, those whose type contains `type` anywhere
// ("Ping", "examples.Ping"); an empty `type` keeps them all.
//
// Exactly one channel must be left, and it must be readable on `node`
// (every channel is, without nodes). Otherwise the error is one line naming
// the candidates (several left), or the channels with that name and with
// that type and the closest ones (none left), or why the node cannot read
// it. Names from the config are escaped (a log's config may be forged).
//
// Allocates; for tools, not for the realtime path.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"

namespace aos {

absl::StatusOr<const Channel*> FindDumpChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type,
                                               const Node* node);

// "/name type" of `channel`, escaped and bounded for a terminal.
std::string DescribeDumpChannel(const Channel& channel);

// "channels of the config: /a T, /b U, ..." (at most 50 named), or that it
// has none: what to pick from when no CHANNEL was given.
std::string ListDumpChannels(const Configuration& config);

}  // namespace aos

#endif  // AOS_TOOLS_AOS_DUMP_CHANNEL_H_
