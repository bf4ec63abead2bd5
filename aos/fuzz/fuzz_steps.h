#ifndef AOS_FUZZ_FUZZ_STEPS_H_
#define AOS_FUZZ_FUZZ_STEPS_H_

// One fuzzing step for each parser of untrusted input that is not the
// shared-memory queue (that one is aos/ipc_lib/queue_fuzz.h). Whatever the
// input, a step must return: a crash, a hang, a sanitizer report or a
// failed CHECK (a broken round-trip property, below) is a bug.
//
// Used by the libFuzzer binaries (*_fuzzer.cc, built with clang by
// tools/fuzz/fuzz.sh) and by fuzz_corpus_test, which replays the checked-in
// corpora and deterministic mutations of them with the normal build.

#include <cstdint>
#include <span>
#include <string>

namespace aos::fuzz {

// JSON text against two schemas (aos.Configuration and aos.timing.Report):
// parsing fails with a message or succeeds; what succeeds prints as strict
// JSON that parses again to the same print (a fixpoint).
// Returns how many of the two schemas accepted it.
int JsonStep(std::span<const uint8_t> input);

// Bytes as an aos.timing.Report from the network or shared memory: decoding
// fails with a message or succeeds; what succeeds formats as a table and as
// a JSON line, and encodes to a report that decodes and encodes to the same
// bytes.
// Returns whether it decoded.
bool TimingReportStep(std::span<const uint8_t> input);

// A set of configuration files: `input` split at NUL bytes into up to four
// files a.json, b.json, c.json, d.json written into `directory` (which must
// exist; the files are replaced), then a.json read with its imports.
// Reading fails with a message or succeeds; a flattened result prints as
// JSON that reads back to the same print.
// Returns whether it was read.
bool ConfigStep(std::span<const uint8_t> input, const std::string& directory);

// Bytes as a log file (an MCAP file; hostile, damaged or not a log at all):
// written to `path` (the directory must exist; the file is replaced), then
// read as aos_dump --log and the streamer read logs: LogFileReader with a
// memory budget of 32 MiB, every message taken, and each message of a
// channel with a schema verified against it and, if valid, printed as JSON.
// What is not an aos log is read with McapReader alone. Checks beyond "no
// crash": every error and problem is one line of printable ASCII, at most a
// few KB long, that names the file, reading ends, and the path origins of
// every message are ones that could be true (PathOrigins::FromRaw), none
// where they are unknown.
// Returns whether it opened as an aos log.
bool McapStep(std::span<const uint8_t> input, const std::string& path);

}  // namespace aos::fuzz

#endif  // AOS_FUZZ_FUZZ_STEPS_H_
