// run_report_json (see run_report_json.h): the configuration by hand, each step and the check
// from their field tables (run_report_fields.h).
#include "hw/run/run_report_json.h"

#include <utility>

#include "hw/run/run_report_fields.h"
#include "hw/run/step_modes.h"
#include "sim/spec/field_json.h"

namespace pipeworks::hw {

nlohmann::json run_report_json(const RunConfig& config, const RunReport& report) {
  nlohmann::json j;
  j["model"] = model_display_name(config.model);
  j["schedule"] = schedule_name(config);
  j["virtual_stages"] = config.virtual_stages;
  j["stages"] = config.num_stages;
  j["microbatches"] = config.num_microbatches;
  j["batch"] = config.batch_size;
  j["data_parallel"] = config.data_parallel;
  j["tensor_parallel"] = config.tensor_parallel;
  j["zero"] = std::string(sim::zero_stage_name(config.zero));
  j["layout"] = sim::layout_text(run_layout(config, report.schedule));
  j["recompute"] = config.recompute;
  j["partition"] = report.partition.boundaries;
  j["threads_per_worker"] = report.threads_per_worker;
  j["worker_cpus"] = report.worker_cpus;
  j["steps"] = nlohmann::json::array();
  for (const StepStats& s : report.steps) {
    nlohmann::json step;
    sim::add_json_fields(step, step_stats_fields(), s);
    j["steps"].push_back(std::move(step));
  }
  if (report.check) sim::add_json_fields(j["check"], gradient_check_fields(), *report.check);
  const auto modes = run_step_modes(report.steps);
  j["step_modes"] = modes ? nlohmann::json{{"fast_steps", modes->fast_steps},
                                           {"fast_ns", {modes->fast_min_ns, modes->fast_max_ns}},
                                           {"slow_steps", modes->slow_steps},
                                           {"slow_ns", {modes->slow_min_ns, modes->slow_max_ns}}}
                          : nlohmann::json();
  return j;
}

}  // namespace pipeworks::hw
