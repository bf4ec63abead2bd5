// libFuzzer entry point: configuration files with imports (fuzz_steps.h). Built
// with clang and run by tools/fuzz/fuzz.sh --target=config.
#include <stdlib.h>
#include <sys/stat.h>
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
  // The files live in a directory of this process's, under AOS_FUZZ_DIR
  // (tools/fuzz/fuzz.sh makes one in memory) or /tmp.
  static const std::string directory = [] {
    const char* base = getenv("AOS_FUZZ_DIR");
    std::string path = std::string(base != nullptr ? base : "/tmp") +
                       "/aos_config_fuzz." + std::to_string(getpid());
    mkdir(path.c_str(), 0700);
    return path;
  }();
  aos::fuzz::ConfigStep({data, size}, directory);
  return 0;
}
