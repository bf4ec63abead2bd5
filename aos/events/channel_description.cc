#include "aos/events/channel_description.h"

#include "aos/util/str_cat.h"

namespace aos {

const Channel* ChannelAt(const Configuration& config, int index) {
  if (config.channels() == nullptr || index < 0 ||
      static_cast<size_t>(index) >= config.channels()->size()) {
    return nullptr;
  }
  return config.channels()->Get(index);
}

std::string DescribeChannel(const Configuration& config, int index) {
  const Channel* channel = ChannelAt(config, index);
  return channel == nullptr ? StrCat("<channel ", index, "?>")
                            : StrCat(channel->name()->string_view(), " ",
                                     channel->type()->string_view());
}

}  // namespace aos
