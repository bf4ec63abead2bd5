// The main() for every aos test: googletest first (it strips its own flags),
// then gflags for ours, then glog so failures print readable messages.
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  return RUN_ALL_TESTS();
}
