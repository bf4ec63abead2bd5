#ifndef AOS_TESTDATA_EVERYTHING_H_
#define AOS_TESTDATA_EVERYTHING_H_

// Test helpers for aos.testing.Everything (everything.fbs), a table with
// every kind of field.

#include <string_view>

#include "aos/testdata/everything_generated.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/reflection.h"

namespace aos::testing {

// The reflection schema of everything.fbs (root: aos.testing.Everything).
const reflection::Schema& EverythingSchema();

// Parses `json` as an Everything; a parse error fails the current test and
// returns an empty table.
flatbuffers::DetachedBuffer ParseEverything(std::string_view json);

}  // namespace aos::testing

#endif  // AOS_TESTDATA_EVERYTHING_H_
