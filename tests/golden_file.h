// The tests' golden files: an output compared with its file byte for byte, or, with
// PIPEWORKS_UPDATE_GOLDEN=1, written to it instead (review the diff before committing); and the
// tests' one whole-file reader.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace pipeworks::test {

// The whole file; "" when it cannot be read.
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Checks `actual` against the golden file at `path` (rewriting it first when asked); returns
// the file's content.
inline std::string check_golden_file(const std::string& actual, const std::string& path) {
  INFO(path);
  const char* update = std::getenv("PIPEWORKS_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
  }
  std::string golden = read_text_file(path);
  REQUIRE_FALSE(golden.empty());
  CHECK(actual == golden);
  return golden;
}

}  // namespace pipeworks::test
