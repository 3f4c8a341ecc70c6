// check_spec_error (see spec_round_trip.h).
#include "tests/fuzz/spec_round_trip.h"

#include <nlohmann/json.hpp>

#include "tests/fuzz/json_pointers.h"

namespace pipeworks::fuzz {

void check_spec_error(std::string_view text, const std::string& message, std::string_view source,
                      std::string_view what) {
  const std::string name(what);
  require(message.rfind(source, 0) == 0, "a " + name + " error names its source", [&] { return message; });
  // A missing field has no value to point at; a duplicate key is named where it first repeats,
  // which the parsed document (the last duplicate wins) may not hold.
  for (const char* unresolved : {"invalid JSON", "missing required field", "duplicate key"}) {
    if (message.find(unresolved) != std::string::npos) return;
  }
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) return;
  require(message_pointer_resolves(message, source, document), "a " + name + " error's pointer exists in the input",
          [&] { return message; });
}

}  // namespace pipeworks::fuzz
