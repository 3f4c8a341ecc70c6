// The tests' one rule for temporary files: ctest runs test cases as parallel processes, so every
// path a test writes carries its process id; a fixed name lets two test cases overwrite each
// other's file (a torch archive test read another's archive in CI before this rule).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace pipeworks::test {

// <temp dir>/pipeworks_<stem>_<pid><extension>; nothing is created.
inline std::filesystem::path temp_path(const std::string& stem, const std::string& extension = "") {
  return std::filesystem::temp_directory_path() /
         ("pipeworks_" + stem + "_" + std::to_string(::getpid()) + extension);
}

}  // namespace pipeworks::test
