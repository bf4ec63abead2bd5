// libFuzzer entry point: each input damages a queue file, which is then
// opened, read, sent on, registered on and woken (queue_fuzz.h). Built with
// clang and run by tools/fuzz/queue_fuzz.sh.

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "aos/ipc_lib/queue_fuzz.h"
#include "glog/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Every damaged message logs once per reader; that is the point of the
  // logs, but here it would be most of the run's time.
  FLAGS_minloglevel = 3;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string directory = [] {
    const char* base = getenv("AOS_QUEUE_FUZZ_DIR");
    std::string path = std::string(base != nullptr ? base : "/dev/shm") +
                       "/aos_queue_fuzz." + std::to_string(getpid());
    mkdir(path.c_str(), 0700);
    return path;
  }();
  aos::ipc_lib::testing::RunQueueFuzzInput(data, size, directory);
  return 0;
}
