// Checking that a JSON pointer named in a message or a diagnostic exists in the document the
// message is about ("(root)" and "" name the document itself).
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipeworks::fuzz {

// The value at `pointer`, or nullptr when the pointer is malformed or names nothing.
const nlohmann::json* resolve_pointer(const nlohmann::json& document, std::string_view pointer);

// Messages read "<source>: <pointer>: <rest>". Keys may contain ": ", so every cut is tried:
// true when some prefix after "<source>: " is a pointer that resolves in `document`.
bool message_pointer_resolves(std::string_view message, std::string_view source, const nlohmann::json& document);

}  // namespace pipeworks::fuzz
