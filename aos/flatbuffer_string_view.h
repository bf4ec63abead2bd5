#ifndef AOS_FLATBUFFER_STRING_VIEW_H_
#define AOS_FLATBUFFER_STRING_VIEW_H_

// A flatbuffer string field as a std::string_view, absent fields included:
//
//   if (StringView(channel->source_node()) == node_name) ...
//
// Optional string fields read as nullptr; comparing and printing them is
// simpler as "" than as a null check at every use.

#include <string_view>

#include "flatbuffers/flatbuffers.h"

namespace aos {

// `s`'s characters, or "" when the field is absent (`s` is null).
inline std::string_view StringView(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

}  // namespace aos

#endif  // AOS_FLATBUFFER_STRING_VIEW_H_
