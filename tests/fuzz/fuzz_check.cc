// The failure path of fuzz_check.h.
#include "tests/fuzz/fuzz_check.h"

#include <cstdio>
#include <cstdlib>

namespace pipeworks::fuzz {

void fail(std::string_view property, std::string_view detail) {
  std::fprintf(stderr, "property violated: %.*s\n%.*s\n", static_cast<int>(property.size()), property.data(),
               static_cast<int>(detail.size()), detail.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace pipeworks::fuzz
