// Glue between the project's error values and Python: a failed sched::Result becomes a raised
// pipeworks.Error (a ValueError) carrying the same message, so Python code reads straight on.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/result.h"

namespace pipeworks::python {

// Raised in Python as pipeworks.Error (registered in module.cc).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "message" or "message (column N)" when the error knows its column.
std::string error_text(const sched::Error& error);

template <class T>
T unwrap(sched::Result<T> result) {
  if (!result.ok()) throw Error(error_text(result.error()));
  return std::move(result).value();
}

// A list field as a Python property that copies in and out. (def_readwrite would hand out
// references into the vector, which dangle once the list is assigned anew.)
template <class C, class T>
auto list_getter(std::vector<T> C::*member) {
  return [member](const C& self) { return self.*member; };
}
template <class C, class T>
auto list_setter(std::vector<T> C::*member) {
  return [member](C& self, std::vector<T> values) { self.*member = std::move(values); };
}

inline void unwrap_status(const sched::Status& status) {
  if (!status.ok()) throw Error(error_text(status.error()));
}

}  // namespace pipeworks::python
