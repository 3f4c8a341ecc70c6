// Records as Python values, from their field table (sim/spec/field.h): columns for pandas, a dict
// per record, and the table's names and units. Every Python view of a SweepRow or a SimResult is
// generated here, so a field added to its table reaches Python with no line in python/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/spec/field.h"

namespace pipeworks::python {

// One column: a numpy array of the value's type (bool, int32, int64, float64), a list of str for
// text, and for a list-valued field (a partition) a list of its text ("3,2,3"), which pandas can
// compare and sort. The type is that of the field's value for a default record, so a table with
// no records keeps its dtypes.
template <class Record>
pybind11::object field_column(const sim::Field<Record>& field, const std::vector<Record>& records) {
  return std::visit([&](const auto& kind) -> pybind11::object {
    using T = std::decay_t<decltype(kind)>;
    if constexpr (std::is_arithmetic_v<T>) {
      pybind11::array_t<T> out(static_cast<pybind11::ssize_t>(records.size()));
      T* data = out.mutable_data();
      for (std::size_t i = 0; i < records.size(); ++i) data[i] = std::get<T>(field.value(records[i]));
      return out;
    } else {
      pybind11::list out;
      for (const Record& record : records) {
        if constexpr (std::is_same_v<T, std::string>) {
          out.append(pybind11::str(std::get<std::string>(field.value(record))));
        } else {
          out.append(pybind11::str(sim::field_text(field, record)));
        }
      }
      return out;
    }
  }, field.value(Record{}));
}

// {name: column} for every field, in the table's order: `pandas.DataFrame(columns)`.
template <class Record>
pybind11::dict field_columns(std::span<const sim::Field<Record>> fields, const std::vector<Record>& records) {
  pybind11::dict out;
  for (const sim::Field<Record>& field : fields) out[pybind11::str(std::string(field.name))] = field_column(field, records);
  return out;
}

// {name: value} for every field of one record, in the table's order; a list-valued field as a list.
template <class Record>
pybind11::dict field_dict(std::span<const sim::Field<Record>> fields, const Record& record) {
  pybind11::dict out;
  for (const sim::Field<Record>& field : fields) {
    out[pybind11::str(std::string(field.name))] =
        std::visit([](const auto& value) { return pybind11::cast(value); }, field.value(record));
  }
  return out;
}

// {name: unit} for every field, in the table's order: {"makespan_ns": "ns", ...}.
template <class Record>
pybind11::dict field_units(std::span<const sim::Field<Record>> fields) {
  pybind11::dict out;
  for (const sim::Field<Record>& field : fields) {
    out[pybind11::str(std::string(field.name))] = pybind11::str(std::string(sim::unit_name(field.unit)));
  }
  return out;
}

}  // namespace pipeworks::python
