#ifndef AOS_EVENTS_CHANNEL_DESCRIPTION_H_
#define AOS_EVENTS_CHANNEL_DESCRIPTION_H_

// A channel of a timing report as people name it. Reports name channels by
// their index in the configuration; a report from elsewhere may carry any
// index, so a lookup never trusts it.
//
//   DescribeChannel(config, 2);   // "/test aos.examples.Pong"

#include <string>

#include "aos/configuration_generated.h"

namespace aos {

// The channel at `index` in `config`, or null if it has none there.
const Channel* ChannelAt(const Configuration& config, int index);

// "/test aos.examples.Ping": the channel's name and type, from its index in
// `config` ("<channel 17?>" for an index the config does not have).
std::string DescribeChannel(const Configuration& config, int index);

}  // namespace aos

#endif  // AOS_EVENTS_CHANNEL_DESCRIPTION_H_
