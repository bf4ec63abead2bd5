#ifndef AOS_EVENTS_LOGGING_LOG_FORMAT_H_
#define AOS_EVENTS_LOGGING_LOG_FORMAT_H_

// What an aos log holds beyond plain MCAP: the names the logger
// (logger.h) writes and the log reader (log_file_reader.h) looks for.
// docs/logging.md describes the same for users of other MCAP tools.
//
// - One Schema per flatbuffer type: name = the fully qualified type,
//   encoding "flatbuffer", data = its binary reflection schema (.bfbs).
// - One Channel per aos channel: topic = the channel's name, message
//   encoding "flatbuffer", metadata kChannelType (the type) and, for a
//   channel forwarded from another node, kChannelSourceNode.
// - Message: log_time = monotonic_sent_time (the logging node's monotonic
//   clock, ns), publish_time = realtime_sent_time (ns since the Unix
//   epoch), sequence = the message's queue_index.
// - Attachment kConfigAttachment: the flattened aos.Configuration the
//   logger ran with (binary flatbuffer, schemas embedded).
// - Metadata kLoggerMetadata: kLoggerNode (the node's name, "" in a
//   single-node system), kLoggerBootUuid.
// - Metadata kLostMetadata, written again whenever the counts grow (the
//   last one counts): "<channel name> <type>" -> how many messages of that
//   channel the logger missed because it fell behind.

#include <string_view>

namespace aos::logging {

inline constexpr std::string_view kFlatbufferEncoding = "flatbuffer";
inline constexpr std::string_view kChannelType = "aos_type";
inline constexpr std::string_view kChannelSourceNode = "source_node";
inline constexpr std::string_view kConfigAttachment = "aos_config.bfbs";
inline constexpr std::string_view kConfigMediaType =
    "application/x-aos-configuration+flatbuffer";
inline constexpr std::string_view kLoggerMetadata = "aos_logger";
inline constexpr std::string_view kLoggerNode = "node";
inline constexpr std::string_view kLoggerBootUuid = "boot_uuid";
inline constexpr std::string_view kLostMetadata = "aos_lost_messages";

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_FORMAT_H_
