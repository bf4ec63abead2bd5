#!/bin/bash
# Our reflection.fbs must generate the same tables, fields, ids and enum
# values as the reflection_generated.h that Debian's flatbuffers ships, or
# every embedded schema would be read with the wrong layout.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
flatc="${TEST_SRCDIR}/flatbuffers/bin/flatc"
system_header="${TEST_SRCDIR}/flatbuffers/include/flatbuffers/reflection_generated.h"
out="${TEST_TMPDIR}/gen"
mkdir -p "${out}"
"${flatc}" --cpp --no-prefix -o "${out}" \
  "${root}/third_party/flatbuffers_schema/flatbuffers/reflection.fbs" ||
  fatal "flatc exited $? on reflection.fbs"
# Layout lines: vtable offsets, enum values, accessor signatures.
layout() {
  grep -E 'VT_[A-Z_]+ = [0-9]+|^  [A-Za-z]+ = [0-9]+|^  [^/(]+ [a-z_]+\(\) const \{' "$1" |
    sed -E 's/[[:space:]]+$//'
}
diff <(layout "${out}/reflection_generated.h") <(layout "${system_header}") ||
  fail "third_party/flatbuffers_schema/flatbuffers/reflection.fbs does not match" \
    "the layout of ${system_header} (diff above: < ours, > system)"
finish "reflection.fbs matches ${system_header}"
