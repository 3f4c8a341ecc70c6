// JSON pointer look-ups for the harnesses (json_pointers.h).
#include "tests/fuzz/json_pointers.h"

#include <string>

namespace pipeworks::fuzz {

const nlohmann::json* resolve_pointer(const nlohmann::json& document, std::string_view pointer) {
  if (pointer.empty() || pointer == "(root)") return &document;
  try {
    const nlohmann::json::json_pointer p{std::string(pointer)};
    return document.contains(p) ? &document.at(p) : nullptr;
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

bool message_pointer_resolves(std::string_view message, std::string_view source, const nlohmann::json& document) {
  if (message.substr(0, source.size()) != source || message.substr(source.size(), 2) != ": ") return false;
  const std::string_view rest = message.substr(source.size() + 2);
  for (std::size_t cut = rest.find(": "); cut != std::string_view::npos; cut = rest.find(": ", cut + 1)) {
    if (resolve_pointer(document, rest.substr(0, cut)) != nullptr) return true;
  }
  return false;
}

}  // namespace pipeworks::fuzz
