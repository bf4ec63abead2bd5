// libFuzzer entry point: bytes as a log file, read as aos_dump --log reads
// one (fuzz_steps.h). Built with clang and run by tools/fuzz/fuzz.sh
// --target=mcap.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "aos/fuzz/fuzz_steps.h"
#include "glog/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = 3;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The file lives under AOS_FUZZ_DIR (tools/fuzz/fuzz.sh makes one in
  // memory) or /tmp, one per process.
  static const std::string path = [] {
    const char* base = getenv("AOS_FUZZ_DIR");
    return std::string(base != nullptr ? base : "/tmp") + "/aos_mcap_fuzz." +
           std::to_string(getpid()) + ".mcap";
  }();
  aos::fuzz::McapStep({data, size}, path);
  return 0;
}
