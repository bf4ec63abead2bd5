#ifndef AOS_EVENTS_LOGGING_REMOTE_RECORD_H_
#define AOS_EVENTS_LOGGING_REMOTE_RECORD_H_

// The remote record of a forwarded message in an aos log: its
// aos.logging.RemoteMessage flatbuffer (remote_message.fbs), encoded by the
// logger and decoded by the log reader (log_format.h says where it goes).

#include <cstdint>
#include <optional>
#include <string_view>

#include "aos/events/event_loop.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::logging {

struct RemoteRecord {
  // The MCAP channel id and queue index (MCAP sequence) of the message the
  // record belongs to.
  uint16_t channel_id = 0;
  uint32_t queue_index = 0;
  // Where the message was first sent.
  RemoteOrigin origin;
};

// The remote fields of `context`, as RawSender::Send takes them.
RemoteOrigin RemoteOriginOf(const Context& context);

// Builds `record` as a RemoteMessage in `fbb` (cleared first, so its buffer
// is reused: no allocation once it is big enough) and returns the bytes,
// valid until `fbb` changes.
std::string_view EncodeRemoteRecord(const RemoteRecord& record,
                                    flatbuffers::FlatBufferBuilder* fbb);

// The record in `data`, or nullopt if it is malformed: not a RemoteMessage
// that verifies, a field missing, or a source_boot_uuid that is not 16
// bytes.
std::optional<RemoteRecord> DecodeRemoteRecord(std::string_view data);

// The RemoteMessage binary schema (.bfbs), as the log embeds it.
std::string_view RemoteMessageSchema();

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_REMOTE_RECORD_H_
