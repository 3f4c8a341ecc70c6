// Records as text, from their field table (field.h): CSV for files and the aligned table for people.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/spec/field.h"
#include "sim/spec/text_table.h"

namespace pipeworks::sim {

// The cells joined by commas, each quoted as RFC 4180 asks where it holds a comma, a quote or a
// line break, and a newline.
std::string csv_line(const std::vector<std::string>& cells);

// A header of the names of the fields in the CSV (Field::csv), then one line per record.
template <class Record>
std::string fields_csv(std::span<const Field<Record>> fields, const std::vector<Record>& records) {
  std::vector<std::string> cells;
  for (const Field<Record>& field : fields) {
    if (field.csv) cells.emplace_back(field.name);
  }
  std::string out = csv_line(cells);
  for (const Record& record : records) {
    cells.clear();
    for (const Field<Record>& field : fields) {
      if (field.csv) cells.push_back(field_text(field, record));
    }
    out += csv_line(cells);
  }
  return out;
}

// The records at `indices`, in that order, as a TextTable: one column per field given, headed by
// its heading, its cells field_human's. The caller picks the fields (those with a heading).
template <class Record>
std::string fields_table(std::span<const Field<Record>> fields, const std::vector<Record>& records,
                         const std::vector<std::size_t>& indices) {
  std::vector<std::pair<std::string, bool>> columns;
  for (const Field<Record>& field : fields) columns.emplace_back(field.heading, right_aligned(field.unit));
  TextTable table(std::move(columns));
  for (const std::size_t i : indices) {
    std::vector<std::string> cells;
    for (const Field<Record>& field : fields) cells.push_back(field_human(field, records.at(i)));
    table.add(std::move(cells));
  }
  return table.str();
}

}  // namespace pipeworks::sim
