// One field of a reported record (a sweep row, a simulation result): its name, its unit and how to
// read it. Each record has one table of these next to it (sim/plan/sweep_fields.h,
// sim/engine/sim_result_fields.h), and every writer of the record -- CSV, JSON, the people's table,
// Python's columns and dicts -- is generated from that table, so a new field is one line there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pipeworks::sim {

// What a field's value means; the writers format numbers by it (field_text, field_human).
enum class FieldUnit {
  kCount,             // how many: stages, micro-batches, actions
  kIndex,             // which one: a device
  kSamples,           // samples: a batch, a micro-batch
  kNanoseconds,
  kBytes,
  kFraction,          // a share in [0, 1]
  kSamplesPerSecond,
  kTokensPerSecond,
  kFlag,              // yes or no
  kText,
  kLayers,            // a partition: its boundaries, printed as layers per stage
  kNumber,            // a quantity without a unit: a loss, a relative difference
};

// "count", "index", "samples", "ns", "bytes", "fraction", "samples/s", "tokens/s", "flag", "text",
// "layers", "number".
std::string_view unit_name(FieldUnit unit);

// A field's value as JSON and Python take it. `int` and `std::int64_t` stay apart so that
// Python's columns keep their numpy dtypes (int32, int64); a list of int64 is per device (bytes).
using FieldValue =
    std::variant<bool, int, std::int64_t, double, std::string, std::vector<int>, std::vector<std::int64_t>>;

template <class Record>
struct Field {
  std::string_view name;  // the CSV column, the JSON key, the Python column and dict key
  FieldUnit unit = FieldUnit::kCount;
  FieldValue (*value)(const Record&) = nullptr;
  // The CSV cell, unquoted, where value_text's spelling is not it ("on"/"off" for a flag).
  std::string (*text)(const Record&) = nullptr;
  // The column of the people's table (empty: not shown there), and its cell where human_text's
  // spelling is not it.
  std::string_view heading = {};
  std::string (*human)(const Record&) = nullptr;
  bool csv = true;  // false: left out of the CSV, whose other cells already say it
};

// The accessor of a field that is one of the record's members, as it is: `.value = figure<&R::x>`.
template <auto member, class Record>
FieldValue figure(const Record& record) {
  return record.*member;
}

// A value as a CSV cell (unquoted): integers as they are, a fraction with 6 decimals, any other
// number with 6 significant digits, a flag "yes"/"no", text as it is, a list comma-separated.
std::string value_text(const FieldValue& value, FieldUnit unit);

// A cell of the people's table: a duration ("3.06 s"), bytes ("71.3 GiB"), a fraction as a
// percentage ("9.9%"), samples/s with format_samples_per_s's decimals; otherwise `text`.
std::string human_text(const FieldValue& value, FieldUnit unit, std::string text);

// The unit a field's name promises by its suffix: "_ns" nanoseconds, "_bytes" bytes, "_fraction"
// a fraction, "_per_s" samples per second; none for other names. Every table keeps the promise
// (the tests hold each table to it).
std::optional<FieldUnit> unit_named_by(std::string_view name);

// Numbers are right-aligned in the people's table, words left-aligned.
bool right_aligned(FieldUnit unit);

template <class Record>
std::string field_text(const Field<Record>& field, const Record& record) {
  return field.text != nullptr ? field.text(record) : value_text(field.value(record), field.unit);
}

template <class Record>
std::string field_human(const Field<Record>& field, const Record& record) {
  if (field.human != nullptr) return field.human(record);
  return human_text(field.value(record), field.unit, field_text(field, record));
}

}  // namespace pipeworks::sim
