// Reading and drawing from a user's data file (see data_file.h).
#include "hw/model/data_file.h"

#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "hw/model/torch_archive.h"
#include "hw/model/torch_compat.h"
#include "hw/model/torch_errors.h"

namespace pipeworks::hw {
namespace {

constexpr const char* kHowToSave = "save it with torch.save({\"inputs\": X, \"targets\": Y}, path)";

std::string shape_text(const torch::Tensor& t) { return fmt::format("({})", fmt::join(t.sizes(), ", ")); }

bool float_or_long(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kLong;
}

sched::Result<torch::Tensor> tensor_entry(const c10::Dict<c10::IValue, c10::IValue>& dict, const std::string& key,
                                          const std::string& path) {
  const auto it = dict.find(c10::IValue(key));
  if (it == dict.end() || !it->value().isTensor()) {
    return sched::Error{fmt::format("data file '{}' has no tensor \"{}\"; {}", path, key, kHowToSave)};
  }
  torch::Tensor t = it->value().toTensor();
  if (t.dim() < 1 || t.size(0) < 1) {
    return sched::Error{fmt::format("data file '{}': \"{}\" is a {} tensor; it needs samples along dimension 0", path,
                                    key, shape_text(t))};
  }
  if (!float_or_long(t)) {
    return sched::Error{fmt::format("data file '{}': \"{}\" holds {}; save float32 (.float()) or int64 (.long())",
                                    path, key, std::string(c10::toString(t.scalar_type())))};
  }
  return t.contiguous();
}

sched::Result<DataFile> parse(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sched::Error{fmt::format("cannot read data file '{}'", path)};
  if (auto archive = check_torch_archive(path, "torch.save file"); !archive) {
    return sched::Error{"data file " + archive.error().message};
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("data file '{}' is not a torch.save file ({}); {}", path, torch_error_message(e),
                                    kHowToSave)};
  }
  if (!value.isGenericDict()) return sched::Error{fmt::format("data file '{}' holds no dict; {}", path, kHowToSave)};
  const auto dict = value.toGenericDict();
  auto inputs = tensor_entry(dict, "inputs", path);
  if (!inputs) return inputs.error();
  auto targets = tensor_entry(dict, "targets", path);
  if (!targets) return targets.error();
  if (inputs->size(0) != targets->size(0)) {
    return sched::Error{fmt::format("data file '{}': {} inputs but {} targets", path, inputs->size(0), targets->size(0))};
  }
  return DataFile{*inputs, *targets};
}

}  // namespace

sched::Result<std::shared_ptr<const DataFile>> read_data_file(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const DataFile>> read;  // immutable once read
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = read.find(path); it != read.end()) return it->second;
  auto data = parse(path);
  if (!data) return data.error();
  auto shared = std::make_shared<const DataFile>(std::move(*data));
  read.emplace(path, shared);
  return shared;
}

sched::Status check_targets(const DataFile& data, const std::string& path, const std::vector<std::int64_t>& output_shape,
                            LossKind loss) {
  std::vector<std::int64_t> expected = output_shape;
  if (loss == LossKind::kCrossEntropy) expected.pop_back();
  const auto got = data.targets.sizes().slice(1);
  const bool classes = loss == LossKind::kCrossEntropy;
  if (std::vector<std::int64_t>(got.begin(), got.end()) != expected ||
      data.targets.scalar_type() != (classes ? torch::kLong : torch::kFloat)) {
    return sched::Error{fmt::format(
        "data file '{}': targets are {} {}; the model outputs ({}) per sample, so {} needs {} targets of ({}) each",
        path, std::string(c10::toString(data.targets.scalar_type())), shape_text(data.targets),
        fmt::join(output_shape, ", "), loss_kind_name(loss), classes ? "int64" : "float32", fmt::join(expected, ", "))};
  }
  if (!classes) return sched::Ok{};
  const std::int64_t num_classes = output_shape.back();
  const std::int64_t low = data.targets.min().item<std::int64_t>();
  const std::int64_t high = data.targets.max().item<std::int64_t>();
  if (low < 0 || high >= num_classes) {
    return sched::Error{fmt::format("data file '{}': target classes span {}..{}, outside the model's 0..{}", path, low,
                                    high, num_classes - 1)};
  }
  return sched::Ok{};
}

Batch draw_batch(const DataFile& data, int batch_size, std::uint64_t seed) {
  auto generator = compat::make_cpu_generator(seed);
  const std::int64_t n = data.inputs.size(0);
  const torch::Tensor rows = batch_size <= n
                                 ? torch::randperm(n, generator, torch::kLong).slice(0, 0, batch_size)
                                 : torch::randint(n, {batch_size}, generator, torch::kLong);
  return {data.inputs.index_select(0, rows), data.targets.index_select(0, rows)};
}

}  // namespace pipeworks::hw
