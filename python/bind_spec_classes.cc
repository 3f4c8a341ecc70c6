// Python classes for the spec values: ScaledDuration/ScaledBytes, LayerSpec, ModelSpec,
// DeviceSpec, LinkSpec, ClusterSpec, and the simulator's CostModel with StageCost and Link.
// Every field is read-write; list fields are copied in and out (assign the whole list back).
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "sim/engine/cost_model.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/tensor_parallel.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sim::Bytes;
using sim::Nanoseconds;

sim::ParamDtype parse_dtype(const std::string& name) {
  for (auto d : {sim::ParamDtype::kFp32, sim::ParamDtype::kFp16, sim::ParamDtype::kBf16}) {
    if (sim::dtype_name(d) == name) return d;
  }
  throw Error("unknown parameter dtype '" + name + "' (expected fp32, fp16 or bf16)");
}

void bind_scaled_values(py::module_& m) {
  py::class_<sim::ScaledDuration>(m, "ScaledDuration", "fixed_ns + per_sample_ns x micro-batch size.")
      .def(py::init([](Nanoseconds fixed_ns, Nanoseconds per_sample_ns) { return sim::ScaledDuration{fixed_ns, per_sample_ns}; }),
           py::arg("fixed_ns") = 0, py::arg("per_sample_ns") = 0)
      .def_readwrite("fixed_ns", &sim::ScaledDuration::fixed_ns)
      .def_readwrite("per_sample_ns", &sim::ScaledDuration::per_sample_ns)
      .def("at", [](const sim::ScaledDuration& d, int size) { return unwrap(d.at(size)); }, py::arg("microbatch_size"))
      .def("__repr__", [](const sim::ScaledDuration& d) {
        return "ScaledDuration(fixed_ns=" + std::to_string(d.fixed_ns) + ", per_sample_ns=" + std::to_string(d.per_sample_ns) + ")";
      });
  py::class_<sim::ScaledBytes>(m, "ScaledBytes", "fixed_bytes + per_sample_bytes x micro-batch size.")
      .def(py::init([](Bytes fixed, Bytes per_sample) { return sim::ScaledBytes{fixed, per_sample}; }),
           py::arg("fixed_bytes") = 0, py::arg("per_sample_bytes") = 0)
      .def_readwrite("fixed_bytes", &sim::ScaledBytes::fixed_bytes)
      .def_readwrite("per_sample_bytes", &sim::ScaledBytes::per_sample_bytes)
      .def("at", [](const sim::ScaledBytes& b, int size) { return unwrap(b.at(size)); }, py::arg("microbatch_size"))
      .def("__repr__", [](const sim::ScaledBytes& b) {
        return "ScaledBytes(fixed_bytes=" + std::to_string(b.fixed_bytes) + ", per_sample_bytes=" + std::to_string(b.per_sample_bytes) + ")";
      });
}

void bind_model_classes(py::module_& m) {
  py::class_<sim::LayerSpec>(m, "LayerSpec", "Costs of one layer, scaling with the micro-batch size.")
      .def(py::init<>())
      .def_readwrite("name", &sim::LayerSpec::name)
      .def_readwrite("forward", &sim::LayerSpec::forward)
      .def_readwrite("backward_input", &sim::LayerSpec::backward_input)
      .def_readwrite("backward_weight", &sim::LayerSpec::backward_weight)
      .def_readwrite("backward_split", &sim::LayerSpec::backward_split)
      .def_readwrite("output_bytes", &sim::LayerSpec::output_bytes, "activation sent to the next layer")
      .def_readwrite("stash_bytes", &sim::LayerSpec::stash_bytes, "activations kept from forward to backward")
      .def_readwrite("param_bytes", &sim::LayerSpec::param_bytes)
      .def_readwrite("whole_backward", &sim::LayerSpec::whole_backward,
                     "With a split backward, what a whole backward (B) costs when measured apart from I and W;\n"
                     "None: B = I + W.")
      .def_property("backward", &sim::LayerSpec::backward, &sim::LayerSpec::set_backward,
                    "Full backward: whole_backward, else I + W; assigning splits it I = B - B/2, W = B/2\n"
                    "(and clears whole_backward).");

  py::class_<sim::ModelSpec>(m, "ModelSpec", "A model's per-layer costs (see docs/model_spec.md).")
      .def(py::init<>())
      .def_readwrite("name", &sim::ModelSpec::name)
      .def_readwrite("description", &sim::ModelSpec::description)
      .def_property("param_dtype", [](const sim::ModelSpec& s) { return std::string(sim::dtype_name(s.param_dtype)); },
                    [](sim::ModelSpec& s, const std::string& n) { s.param_dtype = parse_dtype(n); }, "'fp32', 'fp16' or 'bf16'")
      .def_readwrite("input_bytes", &sim::ModelSpec::input_bytes)
      .def_property("layers", list_getter(&sim::ModelSpec::layers), list_setter(&sim::ModelSpec::layers), "list of LayerSpec (a copy; assign back to change)")
      .def_property_readonly("num_layers", &sim::ModelSpec::num_layers)
      .def_readonly("tensor_parallel", &sim::ModelSpec::tensor_parallel,
                    "the tensor-parallel group whose one rank these costs are (tensor_parallel_view); 1: whole")
      .def_readonly("sequence_parallel", &sim::ModelSpec::sequence_parallel)
      .def("total_param_bytes", &sim::ModelSpec::total_param_bytes)
      .def("check", [](const sim::ModelSpec& s) { unwrap_status(sim::check_model_spec(s)); },
           "Raises pipeworks.Error unless the spec is valid.")
      .def("to_json", &sim::model_spec_to_json, "JSON text that parse_model_spec reads back unchanged.")
      .def("__repr__", [](const sim::ModelSpec& s) {
        return "<ModelSpec '" + s.name + "' layers=" + std::to_string(s.num_layers()) + ">";
      });
  m.def("parse_model_spec", [](const std::string& text) { return unwrap(sim::parse_model_spec(text)); }, py::arg("json_text"),
        "A ModelSpec from JSON text; errors name the field by JSON pointer.");
  m.def("load_model_spec", [](const std::string& path) { return unwrap(sim::load_model_spec(path)); }, py::arg("path"),
        "A ModelSpec from a JSON file; errors name the file and the field.");
  m.def("tensor_parallel_view",
        [](const sim::ModelSpec& model, int tp, bool sequence_parallel, bool overlap) {
          return unwrap(sim::tensor_parallel_view(model, tp, sequence_parallel, overlap));
        },
        py::arg("model"), py::arg("tp"), py::kw_only(), py::arg("sequence_parallel") = false, py::arg("overlap") = false,
        "One rank's model of a tensor-parallel group of tp (docs/tensor_parallel.md): times, parameters,\n"
        "outputs and the split part of the stash divided by tp; its collectives kept for the cost model.");
}

void bind_cluster_classes(py::module_& m) {
  py::class_<sim::DeviceSpec>(m, "DeviceSpec", "One device: memory capacity, relative speed, FLOP/s.")
      .def(py::init([](Bytes memory_bytes, double relative_speed, double flops_per_s) {
             return sim::DeviceSpec{memory_bytes, relative_speed, flops_per_s};
           }), py::arg("memory_bytes") = 0, py::arg("relative_speed") = 1.0, py::arg("flops_per_s") = 0.0)
      .def_readwrite("memory_bytes", &sim::DeviceSpec::memory_bytes, "0 = unknown / unlimited")
      .def_readwrite("relative_speed", &sim::DeviceSpec::relative_speed)
      .def_readwrite("flops_per_s", &sim::DeviceSpec::flops_per_s);
  py::class_<sim::LinkSpec>(m, "LinkSpec", "A link kind: bandwidth (one direction), latency and send overhead.")
      .def(py::init([](double bw, Nanoseconds latency_ns, Nanoseconds send_overhead_ns) {
             return sim::LinkSpec{bw, latency_ns, send_overhead_ns};
           }),
           py::arg("bandwidth_bytes_per_s") = 0.0, py::arg("latency_ns") = 0, py::arg("send_overhead_ns") = 0)
      .def_readwrite("bandwidth_bytes_per_s", &sim::LinkSpec::bandwidth_bytes_per_s)
      .def_readwrite("latency_ns", &sim::LinkSpec::latency_ns)
      .def_readwrite("send_overhead_ns", &sim::LinkSpec::send_overhead_ns,
                     "what a send costs its sender before the data leaves (its stream is held that long)");
  py::class_<sim::ClusterSpec>(m, "ClusterSpec", "Devices grouped into nodes, intra/inter-node links, comm mode.")
      .def(py::init<>())
      .def_readwrite("name", &sim::ClusterSpec::name)
      .def_readwrite("description", &sim::ClusterSpec::description)
      .def_property("devices", list_getter(&sim::ClusterSpec::devices), list_setter(&sim::ClusterSpec::devices), "list of DeviceSpec (a copy; assign back to change)")
      .def_readwrite("devices_per_node", &sim::ClusterSpec::devices_per_node)
      .def_readwrite("intra_node", &sim::ClusterSpec::intra_node)
      .def_readwrite("inter_node", &sim::ClusterSpec::inter_node)
      .def_property("comm_mode", [](const sim::ClusterSpec& c) { return std::string(sim::comm_mode_name(c.comm_mode)); },
                    [](sim::ClusterSpec& c, const std::string& n) { c.comm_mode = unwrap(sim::parse_comm_mode(n)); },
                    "'overlap' or 'blocking'")
      .def_readwrite("dispatch_overhead_ns", &sim::ClusterSpec::dispatch_overhead_ns)
      .def_readwrite("contention_factor", &sim::ClusterSpec::contention_factor)
      .def_readwrite("overlapped_pass_share", &sim::ClusterSpec::overlapped_pass_share,
                     "an OVERLAP_F_B pair takes its longer pass and this share of the shorter (1: back to back)")
      .def_readwrite("cores", &sim::ClusterSpec::cores, "a CPU node's cores; 0: no limit (GPUs)")
      .def_readwrite("threads_per_device", &sim::ClusterSpec::threads_per_device)
      .def_readwrite("core_slice_ns", &sim::ClusterSpec::core_slice_ns,
                     "how long a device computing back to back keeps its core while others wait (0: none)")
      .def_readwrite("idle_slowdown", &sim::ClusterSpec::idle_slowdown,
                     "an action after its device idled takes up to this factor of its time (1: never slower)")
      .def_readwrite("idle_slowdown_after_ns", &sim::ClusterSpec::idle_slowdown_after_ns,
                     "the idle time from which idle_slowdown applies in full (linear before)")
      .def_property_readonly("compute_slots", &sim::ClusterSpec::compute_slots,
                             "devices of a node that compute at once (0: no limit)")
      .def_property_readonly("num_devices", &sim::ClusterSpec::num_devices)
      .def("check", [](const sim::ClusterSpec& c) { unwrap_status(sim::check_cluster_spec(c)); })
      .def("to_json", &sim::cluster_spec_to_json)
      .def("__repr__", [](const sim::ClusterSpec& c) {
        return "<ClusterSpec '" + c.name + "' devices=" + std::to_string(c.num_devices()) + ">";
      });
  m.def("parse_cluster_spec", [](const std::string& text) { return unwrap(sim::parse_cluster_spec(text)); },
        py::arg("json_text"),
        "A ClusterSpec from JSON text; errors name the field by JSON pointer.");
  m.def("load_cluster_spec", [](const std::string& path) { return unwrap(sim::load_cluster_spec(path)); }, py::arg("path"),
        "A ClusterSpec from a JSON file.");
}

void bind_cost_model_classes(py::module_& m) {
  using sim::StageCost;
  py::class_<StageCost>(m, "StageCost", "What one stage's actions cost for one micro-batch on its device.")
      .def(py::init<>())
      .def_readwrite("forward_ns", &StageCost::forward_ns)
      .def_readwrite("backward_ns", &StageCost::backward_ns)
      .def_readwrite("backward_input_ns", &StageCost::backward_input_ns)
      .def_readwrite("backward_weight_ns", &StageCost::backward_weight_ns)
      .def_readwrite("recompute_ns", &StageCost::recompute_ns)
      .def_readwrite("forward_no_grad_ns", &StageCost::forward_no_grad_ns)
      .def_readwrite("input_bytes", &StageCost::input_bytes)
      .def_readwrite("output_bytes", &StageCost::output_bytes)
      .def_readwrite("stash_bytes", &StageCost::stash_bytes)
      .def_readwrite("param_bytes", &StageCost::param_bytes)
      .def_readwrite("grad_bytes", &StageCost::grad_bytes)
      .def_readwrite("optimizer_bytes", &StageCost::optimizer_bytes);
  py::class_<sim::Link>(m, "Link", "A point-to-point path; transfers on one link queue behind each other.")
      .def(py::init([](Nanoseconds latency_ns, double bw, Nanoseconds send_overhead_ns) {
             return sim::Link{latency_ns, bw, send_overhead_ns};
           }),
           py::arg("latency_ns") = 0, py::arg("bandwidth_bytes_per_s") = 1e18, py::arg("send_overhead_ns") = 0)
      .def_readwrite("latency_ns", &sim::Link::latency_ns)
      .def_readwrite("bandwidth_bytes_per_s", &sim::Link::bandwidth_bytes_per_s)
      .def_readwrite("send_overhead_ns", &sim::Link::send_overhead_ns);
  py::class_<sim::CostModel>(m, "CostModel",
                             "The simulator's input besides the schedule. List fields are copies: to change a stage,\n"
                             "`s = cm.stages; s[0].forward_ns = 5; cm.stages = s`.")
      .def(py::init<>())
      .def_property("stages", list_getter(&sim::CostModel::stages), list_setter(&sim::CostModel::stages))
      .def_readwrite("num_devices", &sim::CostModel::num_devices)
      .def_property("device_memory_bytes", list_getter(&sim::CostModel::device_memory_bytes), list_setter(&sim::CostModel::device_memory_bytes))
      .def_property("links", list_getter(&sim::CostModel::links), list_setter(&sim::CostModel::links))
      .def_property("link_of", list_getter(&sim::CostModel::link_of), list_setter(&sim::CostModel::link_of), "link_of[src * num_devices + dst]; -1 on the diagonal")
      .def_property("comm_mode", [](const sim::CostModel& c) { return std::string(sim::comm_mode_name(c.comm_mode)); },
                    [](sim::CostModel& c, const std::string& n) { c.comm_mode = unwrap(sim::parse_comm_mode(n)); })
      .def_readwrite("per_action_overhead_ns", &sim::CostModel::per_action_overhead_ns)
      .def_readwrite("contention_factor", &sim::CostModel::contention_factor)
      .def_readwrite("overlapped_pass_share", &sim::CostModel::overlapped_pass_share)
      .def_readwrite("contention_group", &sim::CostModel::contention_group)
      .def_readwrite("compute_slots", &sim::CostModel::compute_slots,
                     "devices of one contention group that compute at once; the others wait (0: no limit)")
      .def_readwrite("compute_slice_ns", &sim::CostModel::compute_slice_ns,
                     "how long a device computing back to back keeps its slot while others wait (0: none)")
      .def_readwrite("idle_slowdown", &sim::CostModel::idle_slowdown,
                     "an action after its device idled takes up to this factor of its time (1: never slower)")
      .def_readwrite("idle_slowdown_after_ns", &sim::CostModel::idle_slowdown_after_ns,
                     "the idle time from which idle_slowdown applies in full (linear before)")
      .def_readwrite("microbatch_size", &sim::CostModel::microbatch_size)
      .def("check", [](const sim::CostModel& c) { unwrap_status(sim::check_cost_model(c)); });
}

}  // namespace

void bind_spec_classes(py::module_& m) {
  bind_scaled_values(m);
  bind_model_classes(m);
  bind_cluster_classes(m);
  bind_cost_model_classes(m);
}

}  // namespace pipeworks::python
