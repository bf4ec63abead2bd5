#include "aos/events/lttng_callback_register.h"

#include <string>

#include "aos/tracing/lttng/trace_points.h"

namespace aos {
namespace {

std::string ChannelName(const Channel* channel) {
  return std::string(channel->name()->string_view()) + " " +
         std::string(channel->type()->string_view());
}

}  // namespace

void TraceRegisterCallbacks(const EventLoop& loop) {
  if (!tracing::lttng::RegisterEnabled()) return;
  namespace lt = tracing::lttng;
  const char* application = loop.name().c_str();
  for (const auto& timer : loop.timers()) {
    lt::TraceCallbackRegister(&timer->timing(), "timer", timer->name().c_str(),
                              application);
  }
  for (const auto& phased_loop : loop.phased_loops()) {
    lt::TraceCallbackRegister(&phased_loop->timing(), "phased loop",
                              phased_loop->name().c_str(), application);
  }
  for (const auto& watcher : loop.watchers()) {
    lt::TraceCallbackRegister(&watcher->timing(), "watcher",
                              ChannelName(watcher->channel()).c_str(),
                              application);
  }
  for (const RawSender* sender : loop.senders()) {
    lt::TraceCallbackRegister(&sender->timing(), "sender",
                              ChannelName(sender->channel()).c_str(),
                              application);
  }
  for (const RawFetcher* fetcher : loop.fetchers()) {
    lt::TraceCallbackRegister(&fetcher->timing(), "fetcher",
                              ChannelName(fetcher->channel()).c_str(),
                              application);
  }
}

}  // namespace aos
