// aos_send: sends one message, given as JSON, on a channel (AOS's aos_send,
// `ros2 topic pub`). The work is JsonSender's (json_sender.h).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/tools/aos_dump_channel.h"
#include "aos/tools/json_sender.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"

DEFINE_int64(count, 1,
             "Send the message this many times (0: until Ctrl-C, at "
             "--rate_hz).");
DEFINE_double(rate_hz, 0,
              "Messages a second (0: the --count messages at once, back to "
              "back).");

namespace aos {
namespace {

// The most JSON read from stdin: far more than any message's max_size
// needs.
constexpr size_t kMaxStdinBytes = 64 << 20;

std::string ReadStdin() {
  std::string json;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ExitForUserError(
          StrCat("reading the JSON from stdin: ", strerror(errno)));
    }
    json.append(buffer, n);
    if (json.size() > kMaxStdinBytes) {
      ExitForUserError(StrCat("the JSON on stdin is over ", kMaxStdinBytes,
                              " bytes: no message is that large"));
    }
  }
  return json;
}

int Main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    ExitForUserError(
        argc < 3 ? "give CHANNEL [TYPE] JSON, e.g. aos_send /test "
                   "aos.examples.Ping '{\"value\": 1}' (see --help)"
                 : StrCat("unexpected argument '", InlinePrintable(argv[4]),
                          "': give CHANNEL [TYPE] JSON (see --help)"));
  }
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  const std::string_view type = argc == 4 ? argv[2] : "";
  auto channel = FindSendChannel(config->message(), argv[1], type, *node);
  if (absl::IsNotFound(channel.status())) {
    ExitForUserError(
        NameTheConfig(StrCat(channel.status().message()), FLAGS_config));
  }
  if (!channel.ok()) ExitForUserError(StrCat(channel.status().message()));
  const std::string_view argument = argv[argc - 1];
  const std::string json =
      argument == "-" ? ReadStdin() : std::string(argument);

  ShmEventLoop loop(&config->message(), "aos_send", *node);
  loop.SkipTimingReport();
  auto sender = JsonSender::Make(
      &loop, *channel, json, {.count = FLAGS_count, .rate_hz = FLAGS_rate_hz});
  if (!sender.ok()) ExitForUserError(StrCat(sender.status().message()));
  loop.Run();
  if (!(*sender)->status().ok()) {
    ExitForUserError(StrCat((*sender)->status().message()));
  }
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_send [--config=FILE] [--node=NAME] CHANNEL [TYPE] JSON\n"
      "       aos_send ... CHANNEL [TYPE] - < message.json\n"
      "Sends JSON as one message on CHANNEL (--count times, at --rate_hz),\n"
      "then exits:\n"
      "  aos_send --config=bazel-bin/examples/pingpong_config.json \\\n"
      "      /test aos.examples.Ping '{\"value\": 1}'\n"
      "CHANNEL and TYPE are read as aos_dump reads them (the config's maps\n"
      "for the node; TYPE may be part of the type, and is needed when\n"
      "several channels share the name); - reads the JSON from stdin. The\n"
      "channel must be sent on this node. --config defaults to the\n"
      "framework's aos/aos.json (/aos only). See docs/aos_send.md.");
  return aos::Main(argc, argv);
}
