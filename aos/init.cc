#include "aos/init.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "gflags/gflags.h"
#include "glog/logging.h"

namespace aos {
namespace {

char kHelpFlag[] = "--help";

bool IsOurs(const std::string& filename) {
  for (const char* prefix : {"aos/", "examples/", "tools/"}) {
    if (filename.starts_with(prefix)) return true;
  }
  return false;
}

void PrintHelp(std::string_view usage) {
  std::cout << usage << "\n\nFlags:\n";
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!IsOurs(flag.filename)) continue;
    std::cout << "  --" << flag.name << " (" << flag.type << ", default: "
              << (flag.type == "string" ? "\"" + flag.default_value + "\""
                                        : flag.default_value)
              << ")\n      " << flag.description << "\n";
  }
  std::cout << "  --helpfull\n      Also list the flags of glog and gflags.\n";
}

}  // namespace

void InitGoogle(int* argc, char*** argv, std::string_view usage) {
  // -h is what people type first; gflags would call it an unknown flag.
  for (int i = 1; i < *argc; ++i) {
    if (std::string_view((*argv)[i]) == "-h") (*argv)[i] = kHelpFlag;
  }
  gflags::SetUsageMessage(std::string(usage));
  gflags::ParseCommandLineNonHelpFlags(argc, argv, true);
  std::string help;
  if (gflags::GetCommandLineOption("help", &help) && help == "true") {
    PrintHelp(usage);
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

}  // namespace aos
