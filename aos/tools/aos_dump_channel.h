#ifndef AOS_TOOLS_AOS_DUMP_CHANNEL_H_
#define AOS_TOOLS_AOS_DUMP_CHANNEL_H_

// Which channels `aos_dump CHANNEL [TYPE]` prints and which channel
// `aos_send CHANNEL [TYPE] JSON` sends on: the rule of AOS's aos_dump and
// aos_send, with their fatal cases turned into one-line errors.
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
// FindDumpChannel: exactly one channel must be left, and it must be
// readable on `node` (every channel is, without nodes). Otherwise the error
// is one line naming the candidates (several left: InvalidArgument), or the
// channels with that name and with that type and the closest ones (none
// left: NotFound), or why the node cannot read it (InvalidArgument). Names
// from the config are escaped (a log's config may be forged).
//
// Allocates; for tools, not for the realtime path.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"

namespace aos {

absl::StatusOr<const Channel*> FindDumpChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type,
                                               const Node* node);

// aos_dump's rule, as AOS's: with an empty `type`, every channel the name
// matches that `node` can read, in the config's order (an error as above
// when it matches none, or none of them is readable); with a type, what
// FindDumpChannel finds.
absl::StatusOr<std::vector<const Channel*>> FindDumpChannels(
    const Configuration& config, std::string_view name, std::string_view type,
    const Node* node);

// aos_send's rule: as FindDumpChannel, but the channel must be sendable on
// `node`: `node` is its source_node (every channel is, without nodes);
// otherwise InvalidArgument naming the node that sends it.
absl::StatusOr<const Channel*> FindSendChannel(const Configuration& config,
                                               std::string_view name,
                                               std::string_view type,
                                               const Node* node);

// `error` (a channel not found in the config) followed by which config that
// was: `config_flag` (the --config given, escaped), or, when it is empty,
// the built-in aos/aos.json, which has only the /aos channels, and what to
// give instead.
std::string NameTheConfig(std::string_view error, std::string_view config_flag);

// "/name type" of `channel`, escaped and bounded for a terminal.
std::string DescribeDumpChannel(const Channel& channel);

// "channels of the config: /a T, /b U, ..." (at most 50 named), or that it
// has none: what to pick from when no CHANNEL was given.
std::string ListDumpChannels(const Configuration& config);

}  // namespace aos

#endif  // AOS_TOOLS_AOS_DUMP_CHANNEL_H_
