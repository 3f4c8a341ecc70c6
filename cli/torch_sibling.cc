// Handing a command line to the LibTorch sibling (see torch_sibling.h).
#include "cli/torch_sibling.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

#include "cli/command_list.h"
#include "cli/commands.h"

namespace pipeworks::cli {

bool runs_without_torch(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view first = argv[1];
#define PIPEWORKS_IS_COMMAND(name) \
  if (first == #name) return true;
  PIPEWORKS_CLI_COMMANDS(PIPEWORKS_IS_COMMAND)
#undef PIPEWORKS_IS_COMMAND
  return false;
}

int exec_sibling(std::string_view sibling, char** argv) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path path = (error ? std::filesystem::path(argv[0]).parent_path() : self.parent_path()) / sibling;
  ::execv(path.c_str(), argv);
  const int reason = errno;
  std::cerr << "pipeworks: error: cannot start " << path.string() << " (the commands run, profile and launch live "
            << "there): " << std::strerror(reason) << "\n";
  return kExitInvalid;
}

}  // namespace pipeworks::cli
