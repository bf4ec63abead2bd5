#ifndef AOS_FLATBUFFER_MERGE_H_
#define AOS_FLATBUFFER_MERGE_H_

// Copying and merging flatbuffer tables of any type, driven by a reflection
// schema.
//
//   flatbuffers::FlatBufferBuilder fbb;
//   const flatbuffers::Table *layers[] = {imported_channel, local_channel};
//   fbb.Finish(MergeFlatbufferTables(&fbb, *schema, *channel_object, layers));
//
// Merging takes, field by field, the value from the last layer in which the
// field is present ("later fields win"). The merge is shallow: a present
// sub-table, vector or string replaces the earlier one whole. Presence is what
// flatbuffers stores, so a value equal to the field's default counts as
// present only if the builder wrote it (JsonToFlatbuffer keeps every field
// written in the JSON, defaults included).
//
// Costs: one pass over the layers' fields, plus a deep copy of every chosen
// non-scalar field into `fbb`. Allocates (through fbb); not for realtime code.

#include <span>

#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/reflection.h"

namespace aos {

// Builds, in `fbb`, a table of type `object` (which must belong to `schema`)
// holding for every field the value of the last layer that has it. Null
// layers are skipped; with no layer the result is an empty table. Every layer
// must be a table of type `object`; deprecated fields are dropped. `fbb` must
// not be inside another table.
flatbuffers::Offset<flatbuffers::Table> MergeFlatbufferTables(
    flatbuffers::FlatBufferBuilder* fbb, const reflection::Schema& schema,
    const reflection::Object& object,
    std::span<const flatbuffers::Table* const> layers);

// Deep-copies `table` (of type `object` in `schema`) into `fbb`.
flatbuffers::Offset<flatbuffers::Table> CopyFlatbufferTable(
    flatbuffers::FlatBufferBuilder* fbb, const reflection::Schema& schema,
    const reflection::Object& object, const flatbuffers::Table& table);

}  // namespace aos

#endif  // AOS_FLATBUFFER_MERGE_H_
