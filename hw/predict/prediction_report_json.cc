// prediction_report_json (see prediction_report_json.h).
#include "hw/predict/prediction_report_json.h"

#include "hw/model/model_config.h"
#include "hw/predict/stage_replay_json.h"
#include "sim/spec/cluster_spec.h"

namespace pipeworks::hw {
namespace {

nlohmann::json steps_json(const MeasuredRun& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto* list : {&run.warmup, &run.steps}) {
    for (const MeasuredStep& s : *list) {
      steps.push_back({{"step", s.step},
                       {"warmup", list == &run.warmup},
                       {"step_ns", s.step_ns},
                       {"makespan_ns", s.makespan_ns},
                       {"loss", s.loss},
                       {"peak_activation_bytes", s.peak_activation_bytes}});
    }
  }
  return steps;
}

nlohmann::json cost_model_json(const PredictionReport& report) {
  const sim::CostModel& cm = report.prediction.costs;
  return {{"per_action_overhead_ns", cm.per_action_overhead_ns},
          {"handoff_latency_ns", cm.links.empty() ? 0 : cm.links.front().latency_ns},
          {"relative_speed", report.device_speed()},
          {"device_slowdown", report.prediction.device_slowdown},
          {"comm_mode", sim::comm_mode_name(cm.comm_mode)},
          {"idle_slowdown", cm.idle_slowdown},
          {"idle_slowdown_after_ns", cm.idle_slowdown_after_ns},
          {"profiled", report.profile.has_value()},
          {"stage_replay", report.replay ? replay_json(*report.replay) : nlohmann::json(nullptr)}};
}

}  // namespace

nlohmann::json prediction_report_json(const PredictionReport& report) {
  const RunConfig& c = report.config;
  nlohmann::json j;
  j["schema"] = "pipeworks.predict_report/1";
  j["model"] = model_display_name(c.model);
  j["device"] = device_kind_name(c.device);
  j["schedule"] = schedule_name(c);
  j["virtual_stages"] = c.virtual_stages;
  j["stages"] = c.num_stages;
  j["microbatches"] = c.num_microbatches;
  j["batch"] = c.batch_size;
  j["recompute"] = c.recompute;
  j["partition"] = report.plan.partition.boundaries;
  j["threads_per_worker"] = report.run.threads_per_worker;
  j["worker_cpus"] = report.run.worker_cpus;
  j["cost_model"] = cost_model_json(report);
  j["median_step"] = report.median().step;
  j["steps"] = steps_json(report.run);
  j["warnings"] = report.warnings;
  return j;
}

}  // namespace pipeworks::hw
