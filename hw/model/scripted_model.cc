// Loading and checking a user's TorchScript module (see scripted_model.h).
#include "hw/model/scripted_model.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "hw/model/data_file.h"
#include "hw/model/scripted_layer.h"
#include "hw/model/torch_archive.h"
#include "hw/model/torch_compat.h"
#include "hw/model/torch_errors.h"

namespace pipeworks::hw {
namespace {

// "torch.nn.modules.linear.Linear" for a scripted Linear, "__main__.Block" for a user's class.
std::string type_name(const torch::jit::Module& module) {
  const auto name = module.type()->name();
  if (!name) return "module";
  std::string text = name->qualifiedName();
  for (const std::string prefix : {"__torch__.", "torch.nn.modules."}) {
    if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  }
  // TorchScript renames a second class of the same name "___torch_mangle_N.Name".
  for (std::size_t at = text.find("___torch_mangle_"); at != std::string::npos; at = text.find("___torch_mangle_")) {
    const std::size_t dot = text.find('.', at);
    text.erase(at, dot == std::string::npos ? std::string::npos : dot + 1 - at);
  }
  return text;
}

std::string shape_text(const torch::Tensor& t) { return fmt::format("({})", fmt::join(t.sizes(), ", ")); }

sched::Result<torch::jit::Module> load_module(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return sched::Error{fmt::format("'{}' is a directory", path)};
  if (!std::ifstream(path, std::ios::binary)) {
    return sched::Error{fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  }
  if (auto archive = check_torch_archive(path, "TorchScript module"); !archive) return archive.error();
  try {
    return torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format(
        "'{}' is not a TorchScript module (save one with torch.jit.script(model).save(path); torch.save files "
        "are not TorchScript): {}",
        path, torch_error_message(e))};
  }
}

bool is_tensor(const c10::TypePtr& type) { return type->isSubtypeOf(*c10::TensorType::get()); }

// The child's forward takes one tensor (further arguments must have defaults) and returns one.
sched::Status check_child(const std::string& name, const torch::jit::Module& child) {
  const auto method = child.find_method("forward");
  const std::string what = fmt::format("child '{}' ({})", name, type_name(child));
  if (!method) return sched::Error{what + " has no forward method; every child must be a layer (flatten lists)"};
  const c10::FunctionSchema& schema = method->function().getSchema();
  int required = 0;
  for (std::size_t i = 1; i < schema.arguments().size(); ++i) {
    if (!schema.arguments()[i].default_value()) ++required;
  }
  const bool takes_one = schema.arguments().size() >= 2 && is_tensor(schema.arguments()[1].type()) && required == 1;
  if (!takes_one) {
    std::ostringstream signature;
    signature << schema;
    return sched::Error{fmt::format("{} has {}; every child must take one tensor and return one", what,
                                    signature.str())};
  }
  if (schema.returns().size() != 1 || !is_tensor(schema.returns()[0].type())) {
    return sched::Error{fmt::format("{} returns {}; every child must take one tensor and return one", what,
                                    schema.returns().empty() ? "nothing" : schema.returns()[0].type()->str())};
  }
  // A stage's input is a leaf that needs its gradient; LibTorch refuses to modify it in place.
  if (child.hasattr("inplace") && child.attr("inplace").isBool() && child.attr("inplace").toBool()) {
    return sched::Error{what + " works in place (inplace=True); as the first layer of a stage it would modify the "
                               "stage's input: save it with inplace=False (pipeworks.torch_models.flatten does)"};
  }
  return sched::Ok{};
}

// A child draws random numbers if one of its modules is a dropout with p > 0 (its masks come
// from the global generator, so a re-materialized forward would draw others).
bool draws_random_numbers(const torch::jit::Module& child) {
  for (const torch::jit::Module& m : child.modules()) {
    if (type_name(m).find("Dropout") == std::string::npos) continue;
    if (!m.hasattr("p") || m.attr("p").toDouble() > 0) return true;
  }
  return false;
}

// The storage a tensor views: two children that hold views of one storage share weights.
const void* storage_key(const torch::Tensor& t) { return t.storage().unsafeGetStorageImpl(); }

// Each stage trains its own copy of its layers' tensors, so a parameter or buffer that two
// children hold (tied weights, one module used twice) would be trained as two independent
// tensors and the model the user saved would not be the model trained: such files are refused,
// naming both holders. Sharing inside one child is kept (a child is never cut).
sched::Status check_no_shared_tensors(const std::string& path, const torch::jit::Module& module) {
  std::map<const void*, std::string> holder;  // storage -> "child 'c' tensor 'name'"
  for (const auto& child : module.named_children()) {
    std::set<const void*> own;
    auto visit = [&](const std::string& name, const torch::Tensor& t, const char* what) -> sched::Status {
      if (!t.defined() || !t.has_storage()) return sched::Ok{};
      const void* key = storage_key(t);
      const std::string here = fmt::format("child '{}' {} '{}'", child.name, what, name);
      if (own.count(key) != 0) return sched::Ok{};
      own.insert(key);
      const auto [at, fresh] = holder.emplace(key, here);
      if (fresh) return sched::Ok{};
      return sched::Error{fmt::format(
          "'{}': {} is the same tensor as {} (tied weights or one module used twice); each stage trains its own "
          "copy of its layers, so they would be trained untied: untie them before saving, or make the layers "
          "that share it one child",
          path, here, at->second)};
    };
    for (const auto& p : child.value.named_parameters(/*recurse=*/true)) {
      if (auto s = visit(p.name, p.value, "parameter"); !s) return s;
    }
    for (const auto& b : child.value.named_buffers(/*recurse=*/true)) {
      if (auto s = visit(b.name, b.value, "buffer"); !s) return s;
    }
  }
  return sched::Ok{};
}

torch::Tensor sample_inputs(const ScriptedModelConfig& c, int batch_size, at::Generator& generator) {
  std::vector<std::int64_t> shape{batch_size};
  shape.insert(shape.end(), c.input_shape.begin(), c.input_shape.end());
  if (c.input_dtype == InputDtype::kInt64) return torch::randint(c.input_high, shape, generator, torch::kLong);
  return torch::randn(shape, generator);
}

// The module's own forward on `input` must give what its children in order gave.
sched::Status compare_with_forward(const std::string& path, torch::jit::Module& module, const torch::Tensor& input,
                                   const torch::Tensor& sequential) {
  const std::string rule = "pipeworks cuts a module into its top-level children, so its forward must be them in "
                           "order (save an nn.Sequential, or use pipeworks.torch_models.flatten)";
  if (!module.find_method("forward")) return sched::Ok{};  // a container: its children are the model
  torch::Tensor whole;
  try {
    const c10::IValue out = module.forward({input});
    if (!out.isTensor()) return sched::Error{fmt::format("'{}' returns {}, not a tensor", path, out.tagKind())};
    whole = out.toTensor();
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("'{}': its children in order ran, its forward failed: {}; {}", path,
                                    torch_error_message(e), rule)};
  }
  if (whole.sizes() != sequential.sizes()) {
    return sched::Error{fmt::format("'{}': its forward gives a {} tensor where its children in order give {}; {}",
                                    path, shape_text(whole), shape_text(sequential), rule)};
  }
  if (!torch::allclose(whole, sequential, 1e-4, 1e-5)) {
    const double diff = (whole - sequential).abs().max().item<double>();
    return sched::Error{fmt::format("'{}': its forward differs from its children in order (by up to {:.3g}); {}",
                                    path, diff, rule)};
  }
  return sched::Ok{};
}

sched::Status check_output(const ScriptedModelConfig& c, const torch::Tensor& output) {
  const std::string where = fmt::format("'{}' outputs a {} {} tensor", c.path, shape_text(output),
                                        std::string(c10::toString(output.scalar_type())));
  if (!output.is_floating_point()) return sched::Error{where + "; a loss needs floating-point outputs"};
  if (c.loss == LossKind::kCrossEntropy && output.dim() < 2) {
    return sched::Error{where + "; cross_entropy needs (batch, ..., classes)"};
  }
  return sched::Ok{};
}

// Runs a batch of two samples through the children one by one, then through the module's own
// forward, and compares; fills the output shape.
sched::Status probe(ScriptedModelConfig& c, torch::jit::Module& module) {
  torch::NoGradGuard no_grad;
  module.eval();
  auto generator = compat::make_cpu_generator(1);
  const torch::Tensor input = sample_inputs(c, 2, generator);
  torch::Tensor x = input;
  for (const auto& child : module.named_children()) {
    const std::string got = shape_text(x);
    try {
      torch::jit::Module m = child.value;
      const c10::IValue out = m.forward({x});
      if (!out.isTensor()) throw std::runtime_error("it returned " + std::string(out.tagKind()) + ", not a tensor");
      x = out.toTensor();
    } catch (const std::exception& e) {
      return sched::Error{fmt::format("input shape {} ({}) does not fit '{}': child '{}' ({}) failed on a {} tensor "
                                      "(a batch of 2): {}",
                                      sample_shape_text(c.input_shape), input_dtype_name(c.input_dtype), c.path,
                                      child.name, type_name(child.value), got, torch_error_message(e))};
    }
    if (x.dim() == 0 || x.size(0) != input.size(0)) {
      return sched::Error{fmt::format("'{}': child '{}' ({}) turns a {} tensor (a batch of 2) into a {} tensor; every "
                                      "child must keep the batch as its first dimension (pipeworks splits a batch "
                                      "into micro-batches there and the loss averages over it)",
                                      c.path, child.name, type_name(child.value), got, shape_text(x))};
    }
  }
  if (auto s = compare_with_forward(c.path, module, input, x); !s) return s;
  if (auto s = check_output(c, x); !s) return s;
  c.output_shape.assign(x.sizes().begin() + 1, x.sizes().end());
  return sched::Ok{};
}

// A data file decides the sample's shape and dtype; --input-shape, when given, must agree.
sched::Status take_sample_shape(ScriptedModelConfig& c, const DataFile& data) {
  const auto sizes = data.inputs.sizes().slice(1);
  const std::vector<std::int64_t> shape(sizes.begin(), sizes.end());
  if (!c.input_shape.empty() && c.input_shape != shape) {
    return sched::Error{fmt::format("--input-shape {} contradicts the data file '{}', whose samples are {}",
                                    sample_shape_text(c.input_shape), c.data_path, sample_shape_text(shape))};
  }
  c.input_shape = shape;
  c.input_dtype = data.inputs.scalar_type() == torch::kLong ? InputDtype::kInt64 : InputDtype::kFloat32;
  if (c.input_dtype == InputDtype::kInt64) {
    c.input_high = std::max<std::int64_t>(1, data.inputs.max().item<std::int64_t>() + 1);
  }
  c.data_samples = data.inputs.size(0);
  return sched::Ok{};
}

}  // namespace

sched::Status load_scripted_model(ModelConfig& config) {
  ScriptedModelConfig& c = config.scripted;
  c.layer_names.clear();
  c.random_layers.clear();
  c.parameters = 0;
  auto module = load_module(c.path);
  if (!module) return module.error();
  for (const auto& child : module->named_children()) {
    if (auto s = check_child(child.name, child.value); !s) {
      return sched::Error{fmt::format("'{}': {}", c.path, s.error().message)};
    }
    c.layer_names.push_back(child.name);
    if (draws_random_numbers(child.value)) c.random_layers.push_back(child.name);
  }
  if (auto s = check_no_shared_tensors(c.path, *module); !s) return s;
  if (c.layer_names.empty()) {
    return sched::Error{fmt::format("'{}' ({}) has no child modules to cut into stages; save an nn.Sequential "
                                    "(pipeworks.torch_models.flatten makes one)",
                                    c.path, type_name(*module))};
  }
  for (const torch::Tensor& p : module->parameters()) c.parameters += static_cast<double>(p.numel());
  std::shared_ptr<const DataFile> data;
  if (!c.data_path.empty()) {
    auto read = read_data_file(c.data_path);
    if (!read) return read.error();
    data = *read;
    if (auto s = take_sample_shape(c, *data); !s) return s;
  }
  if (auto s = check_model_config(config); !s) return s;
  if (auto s = probe(c, *module); !s) return s;
  if (data) return check_targets(*data, c.data_path, c.output_shape, c.loss);
  return sched::Ok{};
}

sched::Result<std::vector<Layer>> scripted_layers(const ModelConfig& config) {
  const ScriptedModelConfig& c = config.scripted;
  if (c.layer_names.empty()) return sched::Error{fmt::format("'{}' has not been loaded (load_scripted_model)", c.path)};
  auto module = load_module(c.path);
  if (!module) return module.error();
  std::vector<Layer> layers;
  try {
    for (const auto& child : module->named_children()) {
      layers.push_back({child.name, torch::nn::AnyModule(ScriptedLayer(child.value))});
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("'{}': cannot take its children as layers: {}", c.path, torch_error_message(e))};
  }
  std::vector<std::string> names;
  for (const Layer& layer : layers) names.push_back(layer.name);
  if (names != c.layer_names) {
    return sched::Error{fmt::format("'{}' changed since it was loaded: children {} instead of {}", c.path,
                                    fmt::join(names, ","), fmt::join(c.layer_names, ","))};
  }
  return layers;
}

Batch scripted_batch(const ScriptedModelConfig& c, int batch_size, std::uint64_t seed) {
  if (!c.data_path.empty()) {
    auto data = read_data_file(c.data_path);  // read when the model was loaded; shared since
    if (!data) throw std::runtime_error(data.error().message);
    return draw_batch(**data, batch_size, seed);
  }
  auto generator = compat::make_cpu_generator(seed);
  const torch::Tensor inputs = sample_inputs(c, batch_size, generator);
  std::vector<std::int64_t> shape{batch_size};
  shape.insert(shape.end(), c.output_shape.begin(), c.output_shape.end());
  if (c.loss == LossKind::kMse) return {inputs, torch::randn(shape, generator)};
  const std::int64_t classes = shape.back();
  shape.pop_back();
  return {inputs, torch::randint(classes, shape, generator, torch::kLong)};
}

}  // namespace pipeworks::hw
