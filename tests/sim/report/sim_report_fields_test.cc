// The simulation result's field tables hold the simulate JSON report: the result's, a device's and
// its memory's fields appear in their tables' order with the values the tables read, and the
// report keeps the keys, in the order, it had before the tables existed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/sim_result_fields.h"
#include "sim/engine/simulator.h"
#include "sim/report/sim_report.h"
#include "sim/spec/field_json.h"

namespace {

using namespace pipeworks;
using Json = nlohmann::ordered_json;

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

template <class Record>
std::vector<std::string> names_of(std::span<const sim::Field<Record>> fields) {
  std::vector<std::string> names;
  for (const auto& field : fields) names.emplace_back(field.name);
  return names;
}

// Checks that `object` holds each field with the value the table reads.
template <class Record>
void check_values(const Json& object, std::span<const sim::Field<Record>> fields, const Record& record) {
  for (const auto& field : fields) {
    INFO("field " << field.name);
    CHECK(object.at(std::string(field.name)) == sim::json_value<Json>(field.value(record)));
  }
}

template <class Record>
void check_units_named(std::span<const sim::Field<Record>> fields) {
  for (const auto& field : fields) {
    INFO(field.name);
    CHECK(sim::unit_named_by(field.name).value_or(field.unit) == field.unit);
  }
}

struct Simulated {
  sim::SimResult result;
  sim::ReportInputs inputs;
};

// 1F1B, K=3 M=4, lowered, with each stage's layers known.
Simulated simulated() {
  const auto schedule = sched::lower_comm(*sched::generate(sched::ScheduleKind::kOneFOneB, {3, 4, {}}));
  REQUIRE(schedule);
  auto result = sim::simulate(*schedule, sim::uniform_cost_model(3, 1000, 2000, 500));
  REQUIRE(result);
  sim::ReportInputs inputs{"uniform", "ideal", "1f1b", 3, 4, result->microbatch_size, false, true,
                           {{0, 2, "l0", "l1"}, {2, 4, "l2", "l3"}, {4, 6, "l4", "l5"}},
                           sched::ScheduleKind::kOneFOneB, std::nullopt, {}};
  return {std::move(*result), std::move(inputs)};
}

}  // namespace

TEST_CASE("the simulate report holds the result's fields in the table's order", "[report][fields]") {
  const Simulated s = simulated();
  const Json report = Json::parse(sim::report_json(s.result, s.inputs));
  const std::vector<std::string> keys = keys_of(report);
  CHECK(keys == std::vector<std::string>{
                    "schema", "model", "cluster", "schedule", "num_stages", "num_microbatches", "microbatch_size",
                    "batch_size", "recompute", "comm_lowered", "comm_mode", "makespan_ns", "step_ns", "bubble_fraction",
                    "gpipe_closed_form_bubble_fraction", "throughput_samples_per_s", "fits", "num_actions",
                    "num_transfers", "num_stage_level_actions", "num_composites", "notes", "warnings", "stages", "devices"});
  // Every field of the table, in its order among the report's keys.
  auto at = keys.begin();
  for (const std::string& name : names_of(sim::sim_result_fields())) {
    INFO(name);
    at = std::find(at, keys.end(), name);
    CHECK(at != keys.end());
  }
  check_values(report, sim::sim_result_fields(), s.result);
}

TEST_CASE("each device and stage of the simulate report holds the device's and its memory's fields", "[report][fields]") {
  const Simulated s = simulated();
  const Json report = Json::parse(sim::report_json(s.result, s.inputs));
  std::vector<std::string> figures = names_of(sim::device_result_fields());
  for (const std::string& name : names_of(sim::memory_report_fields())) figures.push_back(name);
  CHECK(figures == std::vector<std::string>{"device", "busy_ns", "idle_ns", "bubble_fraction", "collective_ns", "optimizer_ns", "peak_bytes",
                                            "peak_activation_bytes", "param_bytes", "grad_bytes", "optimizer_bytes",
                                            "capacity_bytes", "fits"});
  REQUIRE(report["devices"].size() == s.result.devices.size());
  for (std::size_t d = 0; d < s.result.devices.size(); ++d) {
    const Json& device = report["devices"][d];
    std::vector<std::string> expected = figures;
    expected.emplace_back("stages");
    CHECK(keys_of(device) == expected);
    check_values(device, sim::device_result_fields(), s.result.devices[d]);
    check_values(device, sim::memory_report_fields(), s.result.devices[d].memory);
  }
  REQUIRE(report["stages"].size() == 3);
  for (const Json& stage : report["stages"]) {
    std::vector<std::string> expected = {"stage", "layer_begin", "layer_end", "layers"};
    expected.insert(expected.end(), figures.begin(), figures.end());
    CHECK(keys_of(stage) == expected);
  }
}

TEST_CASE("a result field named for a unit has that unit", "[report][fields]") {
  check_units_named(sim::sim_result_fields());
  check_units_named(sim::device_result_fields());
  check_units_named(sim::memory_report_fields());
}
