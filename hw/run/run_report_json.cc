// run_report_json (see run_report_json.h).
#include "hw/run/run_report_json.h"

namespace pipeworks::hw {

nlohmann::json run_report_json(const RunConfig& config, const RunReport& report) {
  nlohmann::json j;
  j["model"] = model_display_name(config.model);
  j["schedule"] = schedule_name(config);
  j["virtual_stages"] = config.virtual_stages;
  j["stages"] = config.num_stages;
  j["microbatches"] = config.num_microbatches;
  j["batch"] = config.batch_size;
  j["recompute"] = config.recompute;
  j["partition"] = report.partition.boundaries;
  j["threads_per_worker"] = report.threads_per_worker;
  j["worker_cpus"] = report.worker_cpus;
  for (const StepStats& s : report.steps) {
    j["steps"].push_back({{"step", s.step},
                          {"step_ns", s.step_ns},
                          {"samples_per_s", s.samples_per_s},
                          {"bubble_fraction", s.bubble_fraction},
                          {"loss", s.loss},
                          {"peak_activation_bytes", s.peak_activation_bytes}});
  }
  if (report.check) {
    j["check"] = {{"max_abs_diff", report.check->max_abs_diff},
                  {"max_rel_diff", report.check->max_rel_diff},
                  {"exactly_equal", report.check->exactly_equal},
                  {"passed", report.check->passed}};
  }
  return j;
}

}  // namespace pipeworks::hw
