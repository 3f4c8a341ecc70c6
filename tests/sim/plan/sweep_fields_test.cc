// The sweep row's field table holds its writers: the CSV's columns, the JSON's keys and the
// people's table's columns are the table's, in its order, with the values it reads, and the
// files keep the header and keys they had before the table existed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/plan/sweep.h"
#include "sim/plan/sweep_fields.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/field_json.h"
#include "sim/spec/model_presets.h"

namespace {

using namespace pipeworks;
using sim::Field;
using sim::SweepRow;
constexpr sim::Bytes kMiB = 1024 * 1024;
constexpr sim::Nanoseconds kMs = 1'000'000;

// Rows that fit, rows that do not (a 6 MiB cap) and, last, one too large to simulate.
sim::SweepResult mixed_rows() {
  sim::SweepSpec spec;
  spec.model = sim::uniform_model(8, kMs, 2 * kMs, 0, kMiB, 0);
  spec.cluster.name = "ideal";
  spec.cluster.devices.assign(4, sim::DeviceSpec{0, 1.0, 0});
  spec.cluster.devices_per_node = 4;
  spec.cluster.intra_node = {1e12, 0};
  spec.cluster.inter_node = {1e12, 0};
  spec.batch_sizes = {8};
  spec.stage_counts = {2, 4};
  spec.microbatch_counts = {8};
  spec.schedules = {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB};
  spec.recompute_modes = {false, true};
  spec.memory_cap_bytes = 6 * kMiB;
  auto result = sim::run_sweep(spec);
  REQUIRE(result);
  spec.batch_sizes = {1 << 21};
  result->rows.push_back(sim::evaluate_config(spec, {1 << 21, 4, 1 << 21, sched::ScheduleKind::kGPipe, false}));
  return *result;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// One CSV line's cells, reading RFC 4180 quotes.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

std::vector<const Field<SweepRow>*> csv_fields() {
  std::vector<const Field<SweepRow>*> fields;
  for (const auto& field : sim::sweep_row_fields()) {
    if (field.csv) fields.push_back(&field);
  }
  return fields;
}

}  // namespace

TEST_CASE("the sweep CSV has the table's columns in its order, and the header it always had", "[sweep][fields]") {
  const sim::SweepResult result = mixed_rows();
  REQUIRE_FALSE(result.rows.back().simulated);
  const std::vector<std::string> lines = split_lines(sim::sweep_csv(result.rows));
  REQUIRE(lines.size() == result.rows.size() + 1);
  std::vector<std::string> names;
  for (const auto* field : csv_fields()) names.emplace_back(field->name);
  CHECK(csv_cells(lines[0]) == names);
  CHECK(lines[0] ==
        "batch,stages,virtual_stages,microbatches,microbatch_size,schedule,recompute,partition,makespan_ns,"
        "samples_per_s,bubble_fraction,peak_bytes,peak_device,capacity_bytes,fits,overflow_bytes,stage_compute_ns,"
        "note,partition_note,dp,zero,devices,tail_ns,tokens_per_s,mfu,extrapolated_tables,tp");
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    const std::vector<std::string> cells = csv_cells(lines[r + 1]);
    REQUIRE(cells.size() == names.size());
    for (std::size_t c = 0; c < names.size(); ++c) {
      INFO("row " << r << ", column " << names[c]);
      CHECK(cells[c] == sim::field_text(*csv_fields()[c], result.rows[r]));
    }
  }
  // The cells spell what the row holds: recompute off/on, partition as layers per stage, fits
  // empty where the row was not simulated.
  const SweepRow& row = result.rows.front();
  CHECK(csv_cells(lines[1])[6] == (row.config.recompute ? "on" : "off"));
  CHECK(csv_cells(lines[1])[7] == "4,4");
  CHECK(csv_cells(lines.back())[14].empty());
}

TEST_CASE("each sweep JSON row holds every field of the table with the value it reads", "[sweep][fields]") {
  const sim::SweepResult result = mixed_rows();
  const auto json = nlohmann::json::parse(sim::sweep_json(result));
  REQUIRE(json.at("rows").size() == result.rows.size());
  std::set<std::string> names;
  for (const auto& field : sim::sweep_row_fields()) names.emplace(field.name);
  CHECK(names.size() == sim::sweep_row_fields().size());  // no name twice
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    const auto& row = json["rows"][r];
    std::set<std::string> keys;
    for (const auto& [key, value] : row.items()) keys.insert(key);
    CHECK(keys == names);
    for (const auto& field : sim::sweep_row_fields()) {
      INFO("row " << r << ", field " << field.name);
      CHECK(row.at(std::string(field.name)) == sim::json_value<nlohmann::json>(field.value(result.rows[r])));
    }
  }
  CHECK(json["rows"][0]["partition"] == std::vector<int>{0, 4, 8});
  CHECK(json["rows"].back()["simulated"] == false);
}

TEST_CASE("the sweep's people's table has a column per field with a heading, in the table's order", "[sweep][fields]") {
  const sim::SweepResult result = mixed_rows();
  std::vector<std::string> headings;
  for (const auto& field : sim::sweep_row_fields()) {
    if (!field.heading.empty()) headings.emplace_back(field.heading);
  }
  CHECK(headings == std::vector<std::string>{"batch", "stages", "M", "mb", "schedule", "recompute", "partition",
                                             "step", "samples/s", "bubble", "peak", "fits", "dp", "zero", "MFU", "tp"});
  const auto header_words = [](const std::string& table) {
    std::istringstream in(split_lines(table).at(0));
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
  };
  sim::SweepResult with_tp = result;
  with_tp.rows[1].config.tp = 2;
  CHECK(header_words(sim::rows_table(with_tp.rows, {0, 1}, true)) == headings);
  headings.pop_back();  // the tp column only when a row has tensor parallelism
  CHECK(header_words(sim::rows_table(result.rows, {0, 1}, true)) == headings);
  headings.erase(headings.begin());  // the batch column only when asked for
  CHECK(header_words(sim::rows_table(result.rows, {0, 1}, false)) == headings);
  CHECK_THAT(sim::rows_table(result.rows, {0}), Catch::Contains(" 4*2 ") && Catch::Contains("%"));
}

TEST_CASE("a sweep field named for a unit has that unit", "[sweep][fields]") {
  for (const auto& field : sim::sweep_row_fields()) {
    INFO(field.name);
    CHECK(sim::unit_named_by(field.name).value_or(field.unit) == field.unit);
  }
}
