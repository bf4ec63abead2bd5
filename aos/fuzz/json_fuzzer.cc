// libFuzzer entry point: JSON text against the configuration and timing report
// schemas (fuzz_steps.h). Built with clang and run by tools/fuzz/fuzz.sh
// --target=json.
#include <cstddef>
#include <cstdint>

#include "aos/fuzz/fuzz_steps.h"
#include "glog/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = 3;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aos::fuzz::JsonStep({data, size});
  return 0;
}
