// How a harness states its property: a broken property prints what broke and aborts, which
// libFuzzer records as a crash (saving the input) and the replay main as a failed test.
#pragma once

#include <string_view>

namespace pipeworks::fuzz {

// Prints "property violated: <property>\n<detail>" to stderr and aborts.
[[noreturn]] void fail(std::string_view property, std::string_view detail = {});

// fail(property) when `holds` is false; the detail is built only on failure.
template <class Detail>
void require(bool holds, std::string_view property, Detail&& detail) {
  if (!holds) fail(property, detail());
}
inline void require(bool holds, std::string_view property) {
  if (!holds) fail(property);
}

}  // namespace pipeworks::fuzz
