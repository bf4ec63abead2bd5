#include "aos/flatbuffer_merge.h"

#include <string>
#include <vector>

#include "glog/logging.h"

namespace aos {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Table;
using flatbuffers::uoffset_t;

bool IsScalar(reflection::BaseType type) {
  return type >= reflection::UType && type <= reflection::Double;
}

const reflection::Object& ObjectOf(const reflection::Schema& schema,
                                   const reflection::Field& field) {
  return *schema.objects()->Get(field.type()->index());
}

// The table type a union field holds in `table`, from its `<name>_type`
// companion field.
const reflection::Object& UnionMemberObject(const reflection::Schema& schema,
                                            const reflection::Object& object,
                                            const reflection::Field& field,
                                            const Table& table) {
  const std::string type_field_name = field.name()->str() + "_type";
  const reflection::Field* type_field =
      object.fields()->LookupByKey(type_field_name.c_str());
  CHECK(type_field != nullptr)
      << "schema of " << object.name()->str() << " has union "
      << field.name()->str() << " without " << type_field_name;
  const int64_t member = flatbuffers::GetAnyFieldI(table, *type_field);
  const reflection::Enum* union_enum =
      schema.enums()->Get(field.type()->index());
  const reflection::EnumVal* value = union_enum->values()->LookupByKey(member);
  CHECK(value != nullptr && value->union_type() != nullptr)
      << "union " << field.name()->str() << " holds unknown member " << member;
  return *schema.objects()->Get(value->union_type()->index());
}

// Copies a vector field of `table` into fbb; returns its offset.
uoffset_t CopyVector(FlatBufferBuilder* fbb, const reflection::Schema& schema,
                     const reflection::Object& object,
                     const reflection::Field& field, const Table& table) {
  const reflection::BaseType element = field.type()->element();
  const auto* raw =
      table.GetPointer<const flatbuffers::Vector<uint8_t>*>(field.offset());
  const uoffset_t length = raw->size();
  if (IsScalar(element)) {
    const size_t size = flatbuffers::GetTypeSize(element);
    fbb->StartVector(length, size);
    fbb->PushBytes(raw->Data(), length * size);
    return fbb->EndVector(length);
  }
  switch (element) {
    case reflection::String: {
      const auto* strings = table.GetPointer<
          const flatbuffers::Vector<Offset<flatbuffers::String>>*>(
          field.offset());
      std::vector<Offset<flatbuffers::String>> offsets;
      offsets.reserve(length);
      for (const flatbuffers::String* s : *strings) {
        offsets.push_back(fbb->CreateString(s));
      }
      return fbb->CreateVector(offsets).o;
    }
    case reflection::Obj: {
      const reflection::Object& element_object = ObjectOf(schema, field);
      if (element_object.is_struct()) {
        const size_t size = element_object.bytesize();
        const size_t align = element_object.minalign();
        fbb->StartVector(length * size / align, align);
        fbb->PushBytes(raw->Data(), length * size);
        return fbb->EndVector(length);
      }
      const auto* tables =
          table.GetPointer<const flatbuffers::Vector<Offset<Table>>*>(
              field.offset());
      std::vector<Offset<Table>> offsets;
      offsets.reserve(length);
      for (const Table* element_table : *tables) {
        offsets.push_back(
            CopyFlatbufferTable(fbb, schema, element_object, *element_table));
      }
      return fbb->CreateVector(offsets).o;
    }
    default:
      LOG(FATAL) << "copying field " << object.name()->str() << "."
                 << field.name()->str() << ": vectors of "
                 << reflection::EnumNameBaseType(element)
                 << " are not supported";
  }
}

// Copies a non-scalar, non-struct field of `table`; returns its offset.
uoffset_t CopyOffsetField(FlatBufferBuilder* fbb,
                          const reflection::Schema& schema,
                          const reflection::Object& object,
                          const reflection::Field& field, const Table& table) {
  switch (field.type()->base_type()) {
    case reflection::String:
      return fbb
          ->CreateString(
              table.GetPointer<const flatbuffers::String*>(field.offset()))
          .o;
    case reflection::Obj:
      return CopyFlatbufferTable(
                 fbb, schema, ObjectOf(schema, field),
                 *table.GetPointer<const Table*>(field.offset()))
          .o;
    case reflection::Union:
      return CopyFlatbufferTable(
                 fbb, schema, UnionMemberObject(schema, object, field, table),
                 *table.GetPointer<const Table*>(field.offset()))
          .o;
    case reflection::Vector:
      return CopyVector(fbb, schema, object, field, table);
    default:
      LOG(FATAL) << "field " << object.name()->str() << "."
                 << field.name()->str() << " has unexpected type "
                 << reflection::EnumNameBaseType(field.type()->base_type());
  }
}

// Whether the field is stored inline in the table (scalars and structs).
bool IsInline(const reflection::Schema& schema,
              const reflection::Field& field) {
  const reflection::BaseType type = field.type()->base_type();
  return IsScalar(type) ||
         (type == reflection::Obj && ObjectOf(schema, field).is_struct());
}

}  // namespace

Offset<Table> MergeFlatbufferTables(FlatBufferBuilder* fbb,
                                    const reflection::Schema& schema,
                                    const reflection::Object& object,
                                    std::span<const Table* const> layers) {
  CHECK(!object.is_struct())
      << object.name()->str() << " is a struct, not a table";
  const auto& fields = *object.fields();
  // For each field, the layer it comes from (or null when absent everywhere).
  std::vector<const Table*> source(fields.size(), nullptr);
  for (uoffset_t i = 0; i < fields.size(); ++i) {
    const reflection::Field& field = *fields.Get(i);
    if (field.deprecated()) continue;
    for (const Table* layer : layers) {
      if (layer != nullptr && layer->CheckField(field.offset())) {
        source[i] = layer;
      }
    }
  }
  // A union's type must come from the layer its value comes from.
  for (uoffset_t i = 0; i < fields.size(); ++i) {
    const reflection::Field& field = *fields.Get(i);
    if (field.type()->base_type() != reflection::Union) continue;
    const std::string type_field_name = field.name()->str() + "_type";
    for (uoffset_t j = 0; j < fields.size(); ++j) {
      if (fields.Get(j)->name()->str() == type_field_name)
        source[j] = source[i];
    }
  }

  // Children first: a table's offsets must point at finished objects.
  std::vector<uoffset_t> offsets(fields.size(), 0);
  for (uoffset_t i = 0; i < fields.size(); ++i) {
    const reflection::Field& field = *fields.Get(i);
    if (source[i] == nullptr || IsInline(schema, field)) continue;
    offsets[i] = CopyOffsetField(fbb, schema, object, field, *source[i]);
  }

  const uoffset_t start = fbb->StartTable();
  for (uoffset_t i = 0; i < fields.size(); ++i) {
    const reflection::Field& field = *fields.Get(i);
    if (source[i] == nullptr) continue;
    if (!IsInline(schema, field)) {
      fbb->AddOffset(field.offset(), Offset<void>(offsets[i]));
      continue;
    }
    // Inline data is copied as raw bytes so that a value equal to the default
    // stays present, as it was in the source.
    const uint8_t* data = source[i]->GetAddressOf(field.offset());
    size_t size;
    size_t align;
    if (field.type()->base_type() == reflection::Obj) {
      const reflection::Object& struct_object = ObjectOf(schema, field);
      size = struct_object.bytesize();
      align = struct_object.minalign();
    } else {
      size = flatbuffers::GetTypeSize(field.type()->base_type());
      align = size;
    }
    fbb->Align(align);
    fbb->PushBytes(data, size);
    fbb->TrackField(field.offset(), fbb->GetSize());
  }
  return Offset<Table>(fbb->EndTable(start));
}

Offset<Table> CopyFlatbufferTable(FlatBufferBuilder* fbb,
                                  const reflection::Schema& schema,
                                  const reflection::Object& object,
                                  const Table& table) {
  const Table* layers[] = {&table};
  return MergeFlatbufferTables(fbb, schema, object, layers);
}

}  // namespace aos
