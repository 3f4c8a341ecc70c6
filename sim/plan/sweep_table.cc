// Writers for sweep rows: CSV and JSON for files and notebooks, aligned text for the terminal,
// each generated from the row's field table (sweep_fields.h).
#include "sim/plan/sweep_table.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sim/plan/sweep_fields.h"
#include "sim/spec/field_json.h"
#include "sim/spec/field_text.h"

namespace pipeworks::sim {

std::string_view recompute_name(bool recompute) { return recompute ? "on" : "off"; }

std::string sweep_csv(const std::vector<SweepRow>& rows) { return fields_csv(sweep_row_fields(), rows); }

std::string sweep_json(const SweepResult& result) {
  // nlohmann::json keeps an object's keys sorted, so the file's keys are in alphabetical order.
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& r : result.rows) {
    nlohmann::json row = nlohmann::json::object();
    add_json_fields(row, sweep_row_fields(), r);
    rows.push_back(std::move(row));
  }
  const SkipCounts& s = result.skipped;
  const nlohmann::json skipped = {{"total", s.total()},
                                  {"more_stages_than_devices", s.more_stages_than_devices},
                                  {"more_stages_than_layers", s.more_stages_than_layers},
                                  {"microbatches_not_dividing_batch", s.microbatches_not_dividing_batch}};
  return nlohmann::json{{"rows", rows}, {"skipped", skipped}}.dump(2) + "\n";
}

std::string rows_table(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& indices, bool show_batch) {
  const bool show_tp = std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.config.tp > 1; });
  std::vector<Field<SweepRow>> columns;
  for (const Field<SweepRow>& field : sweep_row_fields()) {
    const bool hidden = (!show_batch && field.name == "batch") || (!show_tp && field.name == "tp");
    if (!field.heading.empty() && !hidden) columns.push_back(field);
  }
  return fields_table<SweepRow>(columns, rows, indices);
}

}  // namespace pipeworks::sim
