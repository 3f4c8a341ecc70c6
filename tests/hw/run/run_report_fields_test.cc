// The run's JSON report writes each step and the gradient check from their field tables
// (hw/run/run_report_fields.h): every table entry is a key with the value the table reads, and
// nothing else is in a step or the check.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "hw/run/run_report_fields.h"
#include "hw/run/run_report_json.h"
#include "sim/spec/units.h"

namespace pipeworks::hw {
namespace {

template <class Record>
std::set<std::string> names(std::span<const sim::Field<Record>> fields) {
  std::set<std::string> out;
  for (const auto& f : fields) out.emplace(f.name);
  return out;
}

std::set<std::string> keys(const nlohmann::json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

TEST_CASE("run report fields: each step and the check are written from their tables") {
  RunReport report;
  report.steps.push_back({0, 12'345'678, 2591.5, 0.25, 1.5, {1024, 2048}});
  report.steps.push_back({1, 11'000'000, 2909.1, 0.2, 1.25, {4096, 8192}});
  GradientCheck check;
  check.max_abs_diff = 3e-7;
  check.max_rel_diff = 1e-6;
  check.exactly_equal = false;
  report.check = check;
  const RunConfig config;
  const nlohmann::json j = run_report_json(config, report);

  REQUIRE(j.at("steps").size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& step = j.at("steps").at(i);
    CHECK(keys(step) == names(step_stats_fields()));
    CHECK(step.at("step") == report.steps[i].step);
    CHECK(step.at("step_ns") == report.steps[i].step_ns);
    CHECK(step.at("samples_per_s") == report.steps[i].samples_per_s);
    CHECK(step.at("bubble_fraction") == report.steps[i].bubble_fraction);
    CHECK(step.at("loss") == report.steps[i].loss);
    CHECK(step.at("peak_activation_bytes") == report.steps[i].peak_activation_bytes);
  }
  CHECK(keys(j.at("check")) == names(gradient_check_fields()));
  CHECK(j.at("check").at("max_abs_diff") == 3e-7);
  CHECK(j.at("check").at("max_rel_diff") == 1e-6);
  CHECK(j.at("check").at("exactly_equal") == false);
  CHECK(j.at("check").at("passed") == true);
}

TEST_CASE("run report fields: a run without a check has no check, a run without steps an empty list") {
  const RunConfig config;
  const RunReport report;
  const nlohmann::json j = run_report_json(config, report);
  CHECK_FALSE(j.contains("check"));
  CHECK(j.at("steps") == nlohmann::json::array());
}

TEST_CASE("run report fields: a field named for a unit has that unit") {
  for (const auto& field : step_stats_fields()) {
    INFO(field.name);
    CHECK(sim::unit_named_by(field.name).value_or(field.unit) == field.unit);
  }
}

TEST_CASE("run report fields: per-device bytes read as a list in CSV-style text") {
  const StepStats s{3, 1, 1.0, 0.0, 0.0, {10, 20, 30}};
  for (const auto& field : step_stats_fields()) {
    if (field.name == "peak_activation_bytes") CHECK(sim::field_text(field, s) == "10,20,30");
    if (field.name == "step_ns") CHECK(sim::field_human(field, s) == sim::format_duration(1));
  }
}

}  // namespace
}  // namespace pipeworks::hw
