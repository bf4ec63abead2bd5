#include "aos/testdata/everything.h"

#include "aos/json_to_flatbuffer.h"
#include "aos/testdata/everything_bfbs_generated.h"
#include "gtest/gtest.h"

namespace aos::testing {

const reflection::Schema& EverythingSchema() {
  return *reflection::GetSchema(EverythingBinarySchema::data());
}

flatbuffers::DetachedBuffer ParseEverything(std::string_view json) {
  absl::StatusOr<flatbuffers::DetachedBuffer> buffer =
      JsonToFlatbuffer(json, EverythingSchema());
  if (buffer.ok()) return std::move(buffer).value();
  ADD_FAILURE() << buffer.status().message();
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(EverythingBuilder(fbb).Finish());
  return fbb.Release();
}

}  // namespace aos::testing
