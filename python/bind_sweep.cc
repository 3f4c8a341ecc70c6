// Python bindings for sweeps and the planner: run_sweep returns a SweepResult whose columns()
// is a dict of numpy arrays / str lists, so `pandas.DataFrame(result.columns())` is one call.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/field_columns.h"
#include "python/without_gil.h"
#include "sim/plan/planner.h"
#include "sim/plan/sweep.h"
#include "sim/plan/sweep_fields.h"
#include "sim/plan/sweep_table.h"
#include "sim/report/plan_report.h"
#include "sim/synth/plan_synthesis.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sim::SweepRow;

py::dict skipped_dict(const sim::SkipCounts& s) {
  py::dict d;
  d["total"] = s.total();
  d["more_stages_than_devices"] = s.more_stages_than_devices;
  d["more_stages_than_layers"] = s.more_stages_than_layers;
  d["microbatches_not_dividing_batch"] = s.microbatches_not_dividing_batch;
  return d;
}

sim::SweepSpec make_spec(const sim::ModelSpec& model, const sim::ClusterSpec& cluster, std::vector<int> batch_sizes,
                         std::vector<int> stage_counts, std::vector<int> microbatch_counts,
                         const std::vector<std::string>& schedules, std::vector<bool> recompute,
                         std::optional<sim::Bytes> memory_cap_bytes, const std::string& optimizer,
                         std::vector<int> virtual_stages) {
  sim::SweepSpec spec;
  spec.model = model;
  spec.cluster = cluster;
  spec.batch_sizes = std::move(batch_sizes);
  spec.stage_counts = std::move(stage_counts);
  spec.microbatch_counts = std::move(microbatch_counts);
  spec.recompute_modes = std::move(recompute);
  spec.memory_cap_bytes = memory_cap_bytes;
  spec.optimizer = unwrap(sim::parse_optimizer(optimizer));
  spec.virtual_stage_counts = std::move(virtual_stages);
  for (const auto& s : schedules) spec.schedules.push_back(unwrap(sched::parse_schedule_kind(s)));
  return spec;
}

void bind_rows(py::module_& m) {
  py::class_<SweepRow>(m, "SweepRow", "Figures of one simulated configuration (see SweepResult.columns()).")
      .def_property_readonly("batch_size", [](const SweepRow& r) { return r.config.batch_size; })
      .def_property_readonly("num_stages", [](const SweepRow& r) { return r.config.num_stages; })
      .def_property_readonly("virtual_stages", [](const SweepRow& r) { return r.config.virtual_stages; })
      .def_property_readonly("num_microbatches", [](const SweepRow& r) { return r.config.num_microbatches; })
      .def_property_readonly("microbatch_size", [](const SweepRow& r) { return r.config.microbatch_size(); })
      .def_property_readonly("schedule", [](const SweepRow& r) { return std::string(sched::schedule_kind_name(r.config.schedule)); })
      .def_property_readonly("recompute", [](const SweepRow& r) { return r.config.recompute; })
      .def_property_readonly("dp", [](const SweepRow& r) { return r.config.dp; })
      .def_property_readonly("tp", [](const SweepRow& r) { return r.config.tp; })
      .def_property_readonly("zero", [](const SweepRow& r) { return std::string(sim::zero_stage_name(r.config.zero)); })
      .def_readonly("tail_ns", &SweepRow::tail_ns)
      .def_readonly("tokens_per_s", &SweepRow::tokens_per_s)
      .def_readonly("mfu", &SweepRow::mfu)
      .def_readonly("partition", &SweepRow::partition)
      .def_readonly("simulated", &SweepRow::simulated)
      .def_readonly("makespan_ns", &SweepRow::makespan_ns)
      .def_readonly("samples_per_s", &SweepRow::samples_per_s)
      .def_readonly("bubble_fraction", &SweepRow::bubble_fraction)
      .def_readonly("peak_bytes", &SweepRow::peak_bytes)
      .def_readonly("peak_device", &SweepRow::peak_device)
      .def_readonly("capacity_bytes", &SweepRow::capacity_bytes)
      .def_readonly("fits", &SweepRow::fits)
      .def_readonly("overflow_bytes", &SweepRow::overflow_bytes)
      .def_readonly("stage_compute_ns", &SweepRow::stage_compute_ns)
      .def_readonly("note", &SweepRow::note)
      .def_readonly("partition_note", &SweepRow::partition_note)
      .def_readonly("extrapolated_tables", &SweepRow::extrapolated_tables,
                    "tables of the model spec read beyond their profiled micro-batch sizes (0: none)")
      .def_static("fields", [] { return field_units(sim::sweep_row_fields()); },
                  "The fields of a row, each with its unit, in the order of SweepResult.columns() and of the CSV\n"
                  "(which leaves out simulated: its fits is empty then):\n"
                  "{'batch': 'samples', ..., 'makespan_ns': 'ns', 'bubble_fraction': 'fraction', ...}.");

  py::class_<sim::SweepResult>(m, "SweepResult", "Rows of a sweep, in configuration order, and the skipped counts.")
      .def_readonly("rows", &sim::SweepResult::rows)
      .def_property_readonly("skipped", [](const sim::SweepResult& r) { return skipped_dict(r.skipped); },
                             "Impossible configurations by reason, as a dict.")
      .def("columns", [](const sim::SweepResult& r) { return field_columns(sim::sweep_row_fields(), r.rows); },
           "The rows as a dict of equal-length columns (numpy arrays, lists of str) for pandas.DataFrame,\n"
           "one per field of SweepRow.fields(): batch, stages, virtual_stages, microbatches,\n"
           "microbatch_size, schedule, recompute, partition (layers per stage, '3,2,3'), simulated,\n"
           "makespan_ns, samples_per_s, bubble_fraction, peak_bytes, peak_device, capacity_bytes, fits,\n"
           "overflow_bytes, stage_compute_ns, note, partition_note, dp, zero, devices, tail_ns, tokens_per_s, mfu,\n"
           "extrapolated_tables, tp.")
      .def("ranked", [](const sim::SweepResult& r) { return sim::rank_rows(r.rows); },
           "Row indices best first (fitting, then samples/s, then peak bytes).")
      .def("best_fitting", [](const sim::SweepResult& r) { return sim::best_fitting_row(r.rows); },
           "Index of the fastest fitting row, or None.")
      .def("pareto", [](const sim::SweepResult& r) { return sim::pareto_rows(r.rows); },
           "Indices on the samples/s vs peak bytes Pareto frontier, lowest memory first.")
      .def("to_csv", [](const sim::SweepResult& r) { return sim::sweep_csv(r.rows); })
      .def("to_json", &sim::sweep_json)
      .def("table", [](const sim::SweepResult& r) {
        std::vector<std::size_t> all(r.rows.size());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
        return sim::rows_table(r.rows, all, true);
      }, "Every row as the aligned table `pipeworks sweep` prints.");
}

// The synthesized family as a dict (None when the plan was not asked for one).
py::object synthesis_dict(const sim::Plan& p) {
  if (!p.synthesis) return py::none();
  const sim::PlanSynthesis& s = *p.synthesis;
  py::dict d;
  d["found"] = s.found();
  d["source"] = s.source;
  d["why_not"] = s.why_not;
  d["unsearchable"] = s.unsearchable;
  d["row"] = s.found() ? py::cast(s.row) : py::none();
  d["schedule"] = s.found() ? py::cast(s.schedule) : py::none();
  d["beats_best"] = s.beats_best;
  d["report_json"] = s.report_json;
  return d;
}

void bind_plan_class(py::module_& m) {
  py::class_<sim::Plan>(m, "Plan", "The planner's answer: the sweep, the best fitting row and runners-up.")
      .def_readonly("sweep", &sim::Plan::sweep)
      .def_readonly("best", &sim::Plan::best, "index into sweep.rows of the fastest fitting row, or None")
      .def_property_readonly("runners_up", [](const sim::Plan& p) {
        py::list out;
        for (const auto& r : p.runners_up) {
          out.append(py::dict(py::arg("family") = r.family, py::arg("row") = r.row,
                              py::arg("contains_best") = r.contains_best, py::arg("reason") = r.reason));
        }
        return out;
      }, "One dict per runner-up family: family, row, contains_best, reason.")
      .def_property_readonly("synthesis", &synthesis_dict,
                             "With plan(synthesize=True), the synthesized family as a dict: found, source (the row\n"
                             "searched from, or None), why_not, unsearchable (faster rows synthesis cannot express, and\n"
                             "why), row (a SweepRow of its figures), schedule (a Schedule), beats_best, report_json;\n"
                             "else None.")
      .def("report", &sim::plan_report, "The plan as `pipeworks plan` prints it.");
}

sim::PlanRequest plan_request(const sim::ModelSpec& model, const sim::ClusterSpec& cluster, int batch_size,
                              int num_devices, std::optional<sim::Bytes> memory_cap_bytes, const std::string& optimizer,
                              const std::vector<std::string>& schedules, std::vector<int> virtual_stages,
                              const std::vector<std::string>& zero, std::vector<int> tp) {
  sim::PlanRequest request;
  request.tp_counts = std::move(tp);
  request.model = model;
  request.cluster = cluster;
  request.batch_size = batch_size;
  request.num_devices = num_devices;
  request.memory_cap_bytes = memory_cap_bytes;
  request.optimizer = unwrap(sim::parse_optimizer(optimizer));
  request.virtual_stage_counts = std::move(virtual_stages);
  request.zero_stages.clear();
  for (const std::string& name : zero) request.zero_stages.push_back(unwrap(sim::parse_zero_stage(name)));
  for (const std::string& name : schedules) request.schedules.push_back(unwrap(sched::parse_schedule_kind(name)));
  return request;
}

void bind_planner(py::module_& m) {
  bind_plan_class(m);
  m.def("plan",
        [](const sim::ModelSpec& model, const sim::ClusterSpec& cluster, int batch_size, int num_devices,
           std::optional<sim::Bytes> memory_cap_bytes, const std::string& optimizer, int threads,
           const std::vector<std::string>& schedules, std::vector<int> virtual_stages,
           const std::vector<std::string>& zero, std::vector<int> tp, bool sequence_parallel, bool tp_comm_overlap,
           bool synthesize, double synthesis_time_limit, std::uint64_t synthesis_seed,
           std::int64_t synthesis_max_evaluations) {
          sim::PlanRequest request = plan_request(model, cluster, batch_size, num_devices, memory_cap_bytes, optimizer,
                                                  schedules, std::move(virtual_stages), zero, std::move(tp));
          request.sequence_parallel = sequence_parallel;
          request.tp_comm_overlap = tp_comm_overlap;
          const std::optional<sim::PlanSynthesisOptions> synthesis =
              synthesize ? std::optional(sim::PlanSynthesisOptions{synthesis_time_limit, synthesis_seed,
                                                                   synthesis_max_evaluations})
                         : std::nullopt;
          return without_gil([](const sim::PlanRequest& r, int sweep_threads,
                                const std::optional<sim::PlanSynthesisOptions>& searched) {
            const sim::SweepOptions options{sweep_threads, {}};
            return unwrap(searched ? sim::make_plan_with_synthesis(r, *searched, options) : sim::make_plan(r, options));
          }, std::move(request), threads, synthesis);
        },
        py::arg("model"), py::arg("cluster"), py::kw_only(), py::arg("batch"), py::arg("devices"),
        py::arg("memory_cap_bytes") = py::none(), py::arg("optimizer") = "adam", py::arg("sweep_threads") = 0,
        py::arg("schedules") = std::vector<std::string>{}, py::arg("virtual_stages") = std::vector<int>{2},
        py::arg("zero") = std::vector<std::string>{"0", "1"}, py::arg("tp") = std::vector<int>{},
        py::arg("sequence_parallel") = false, py::arg("tp_comm_overlap") = false, py::arg("synthesize") = false,
        py::arg("synthesis_time_limit") = 5.0, py::arg("synthesis_seed") = 1, py::arg("synthesis_max_evaluations") = -1,
        "Sweeps every layout tp x pp x dp = devices, divisors of batch (micro-batches, dp x M dividing it), the\n"
        "schedules (default: gpipe, 1f1b, zb-h1, zb-h2; any kind by name, virtual_stages= giving v), the\n"
        "ZeRO stages zero= for dp > 1 (default 0 and 1), recompute off/on, and returns the fastest fitting\n"
        "configuration with runners-up. tp: the tensor-parallel counts (default: those dividing a node's\n"
        "devices and `devices` when the model's layers split, else 1). synthesize: also search a schedule\n"
        "(as synthesize() does, for synthesis_time_limit seconds) from the fastest fitting row with tp 1 and\n"
        "dp 1, on that row's placement; it joins the runners-up and Plan.synthesis holds it.");
}

}  // namespace

void bind_sweep(py::module_& m) {
  bind_rows(m);
  m.def("sweep",
        [](const sim::ModelSpec& model, const sim::ClusterSpec& cluster, std::vector<int> batch_sizes,
           std::vector<int> stage_counts, std::vector<int> microbatch_counts, const std::vector<std::string>& schedules,
           std::vector<bool> recompute, std::optional<sim::Bytes> memory_cap_bytes, const std::string& optimizer,
           int threads, std::vector<int> virtual_stages, std::vector<int> dp, const std::vector<std::string>& zero,
           std::vector<int> tp, bool sequence_parallel, bool tp_comm_overlap) {
          sim::SweepSpec spec = make_spec(model, cluster, std::move(batch_sizes), std::move(stage_counts),
                                          std::move(microbatch_counts), schedules, std::move(recompute),
                                          memory_cap_bytes, optimizer, std::move(virtual_stages));
          spec.dp_counts = std::move(dp);
          spec.tp_counts = std::move(tp);
          spec.sequence_parallel = sequence_parallel;
          spec.tp_comm_overlap = tp_comm_overlap;
          spec.zero_stages.clear();
          for (const std::string& name : zero) spec.zero_stages.push_back(unwrap(sim::parse_zero_stage(name)));
          return without_gil([](const sim::SweepSpec& copy, int sweep_threads) {
            return unwrap(sim::run_sweep(copy, sim::SweepOptions{sweep_threads, {}}));
          }, spec, threads);
        },
        py::arg("model"), py::arg("cluster"), py::kw_only(), py::arg("batch"), py::arg("stages"),
        py::arg("microbatches"), py::arg("schedules") = std::vector<std::string>{"gpipe", "1f1b", "zb-h1", "zb-h2"},
        py::arg("recompute") = std::vector<bool>{false, true}, py::arg("memory_cap_bytes") = py::none(),
        py::arg("optimizer") = "adam", py::arg("sweep_threads") = 0, py::arg("virtual_stages") = std::vector<int>{2},
        py::arg("dp") = std::vector<int>{1}, py::arg("zero") = std::vector<std::string>{"0"},
        py::arg("tp") = std::vector<int>{1}, py::arg("sequence_parallel") = false, py::arg("tp_comm_overlap") = false,
        "Simulates every (batch, tp, stages, dp, micro-batches, schedule, zero, recompute) combination with a balanced\n"
        "partition; stages are the devices a pipeline spans (K = v x stages for interleaved-1f1b,\n"
        "looped-bfs and interleaved-zb, v from virtual_stages; 2 x stages for zb-v and dualpipe-v),\n"
        "partition, on `sweep_threads` threads (0: every core); rows are identical for any thread count.\n"
        "dp: data-parallel replicas of each pipeline (stages x dp devices; docs/data_parallel.md), zero: the\n"
        "ZeRO stages ('0'..'3') rows with dp > 1 compare; tp: tensor-parallel ranks of each pipeline rank (inside\n"
        "a node; the model's layers must split, docs/tensor_parallel.md), with sequence_parallel or not,\n"
        "tp_comm_overlap: the collectives overlap their layer's GEMMs.\n"
        "pandas.DataFrame(result.columns()) gives one row per configuration.");
  bind_planner(m);
}

}  // namespace pipeworks::python
