// Records as JSON objects, from their field table (field.h): each field's value under its name.
// Templated on the JSON type so that reports keeping their keys in order (nlohmann::ordered_json)
// and files with sorted keys (nlohmann::json) share it.
#pragma once

#include <span>
#include <string>
#include <variant>

#include "sim/spec/field.h"

namespace pipeworks::sim {

// The value as JSON: a bool, a number (integer or not, as held) a string or an array of integers.
template <class Json>
Json json_value(const FieldValue& value) {
  return std::visit([](const auto& held) { return Json(held); }, value);
}

// Sets object[name] to the field's value, unless the object holds that name already: a report
// that echoes its inputs first says each of them once.
template <class Json, class Record>
void add_json_field(Json& object, const Field<Record>& field, const Record& record) {
  const std::string name(field.name);
  if (!object.contains(name)) object[name] = json_value<Json>(field.value(record));
}

// add_json_field for each field, in the table's order.
template <class Json, class Record>
void add_json_fields(Json& object, std::span<const Field<Record>> fields, const Record& record) {
  for (const Field<Record>& field : fields) add_json_field(object, field, record);
}

}  // namespace pipeworks::sim
