#ifndef AOS_EVENTS_LOGGING_ORIGINS_RECORD_H_
#define AOS_EVENTS_LOGGING_ORIGINS_RECORD_H_

// The origins record of a logged message in an aos log: its
// aos.logging.MessageOrigins flatbuffer (message_origins.fbs), encoded by
// the logger and decoded by the log reader (log_format.h says where it
// goes). Only messages that carry origins have one.

#include <cstdint>
#include <optional>
#include <string_view>

#include "aos/events/path_origins.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::logging {

struct OriginsRecord {
  // The MCAP channel id and queue index (MCAP sequence) of the message the
  // record belongs to.
  uint16_t channel_id = 0;
  uint32_t queue_index = 0;
  // The origins as the record holds them, not yet believed: `count` is the
  // number the record lists (possibly over kMaxPathOrigins, of which only
  // the first kMaxPathOrigins are kept). PathOrigins::FromRaw says which
  // can be true.
  PathOrigins::Raw origins{};
};

// Whether a message with `origins` gets a record: it carries some, or
// some were dropped on its way.
inline bool HasOriginsToRecord(const PathOrigins& origins) {
  return !origins.empty() || origins.dropped() > 0;
}

// Builds the record of the message (`channel_id`, `queue_index`) carrying
// `origins` as a MessageOrigins in `fbb` (cleared first, so its buffer is
// reused: no allocation once it is big enough, which one call with
// kMaxPathOrigins origins makes it) and returns the bytes, valid until `fbb`
// changes.
std::string_view EncodeOriginsRecord(uint16_t channel_id, uint32_t queue_index,
                                     const PathOrigins& origins,
                                     flatbuffers::FlatBufferBuilder* fbb);

// The record in `data`, or nullopt if it is malformed: not a MessageOrigins
// that verifies, or a field missing. Its origins are not checked here (see
// OriginsRecord::origins).
std::optional<OriginsRecord> DecodeOriginsRecord(std::string_view data);

// The MessageOrigins binary schema (.bfbs), as the log embeds it.
std::string_view MessageOriginsSchema();

}  // namespace aos::logging

#endif  // AOS_EVENTS_LOGGING_ORIGINS_RECORD_H_
