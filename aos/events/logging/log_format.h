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
// - Remote records, only in a log of a node that receives forwarded
//   channels: one Schema kRemoteMessageType (its .bfbs,
//   remote_message.fbs) and one Channel, topic kRemoteMessageTopic
//   (no kChannelType: it is not an aos channel; aos channel names start
//   with '/', so the topic cannot collide with one). For every message of a
//   forwarded channel, one RemoteMessage on it, written just before the
//   message with the same log_time and publish_time: the message's MCAP
//   channel id and queue index (its sequence), and where it was first
//   sent: monotonic_remote_time and realtime_remote_time (ns, source
//   node's clocks), remote_queue_index, source_boot_uuid (16 bytes). Its
//   sequence counts the remote records from 0. A reader pairs a record
//   with the next message of that channel id whose sequence matches; a
//   forwarded message without one (damage, a hand-made log) has unknown
//   remote fields.
// - Origins records, in every log written since path origins were added
//   (2026-11-26): one Schema kOriginsType (its .bfbs, message_origins.fbs)
//   and one Channel, topic kOriginsTopic (no kChannelType, as above). For
//   every message that carries path origins (Context::origins, or origins
//   dropped on its way), one MessageOrigins on it, written just before the
//   message (after its remote record, if any) with the same log_time and
//   publish_time: the message's MCAP channel id and queue index, its
//   origins (id, hops, uncertainty in us, time in ns of the logging node's
//   monotonic clock) and how many were dropped. A message that carries none
//   has no record: it costs nothing. Its sequence counts the origins
//   records from 0. A reader pairs a record with the next message of that
//   channel id, if its sequence matches. A log without the channel was
//   written before origins were recorded: its messages' origins are
//   unknown.
// - Metadata kLostMetadata, written again whenever the counts grow (the
//   last one counts): "<channel name> <type>" -> how many messages of that
//   channel the logger missed because it fell behind.

#include <cstdint>
#include <string_view>

namespace aos::logging {

// The largest chunk aos_logger writes: --chunk_size is at most this. The
// writer closes a chunk once it holds at least --chunk_size bytes, so a chunk
// holds at most kMaxChunkSize - 1 bytes plus one record: a message record
// (kMessageRecordOverhead + at most its channel's max_size bytes), a remote
// or an origins record (at most kMaxRemoteRecordSize bytes with its
// overhead).
// Readers refuse a chunk claiming more (log_file_reader.h): 64 MiB is far
// past where a larger chunk compresses better, and bounds what one chunk of
// a forged log can make a reader allocate.
inline constexpr uint64_t kMaxChunkSize = uint64_t{64} << 20;
// A Message record's prefix (opcode, length) and fields before the data
// (channel id, sequence, log_time, publish_time).
inline constexpr uint64_t kMessageRecordOverhead = 1 + 8 + 2 + 4 + 8 + 8;
// A remote or origins record's Message record: an aos.logging.RemoteMessage
// is about 100 bytes, an aos.logging.MessageOrigins at most about 120; this
// bounds both with room to spare.
inline constexpr uint64_t kMaxRemoteRecordSize = 1024;

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
inline constexpr std::string_view kRemoteMessageTopic = "aos_remote_message";
inline constexpr std::string_view kRemoteMessageType =
    "aos.logging.RemoteMessage";
inline constexpr std::string_view kOriginsTopic = "aos_path_origins";
inline constexpr std::string_view kOriginsType = "aos.logging.MessageOrigins";

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_LOG_FORMAT_H_
