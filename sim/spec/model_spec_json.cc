// Model spec <-> JSON (format in docs/model_spec.md). Reading goes through SpecReader so every
// error names its field by JSON pointer; writing uses exact unit strings so files round-trip.
#include <algorithm>
#include <string>
#include <set>

#include <fmt/format.h>

#include "sched/text_file.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/spec_json.h"

namespace pipeworks::sim {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A scaled quantity as read: the line's parts and the optional table.
struct Scaled {
  std::int64_t fixed = 0;
  std::int64_t per_sample = 0;
  std::vector<SizePoint> measured;
  int size_block = 1;
};

// "measured": {"1": <leaf>, "2": <leaf>, ...}: keys are micro-batch sizes (whole numbers >= 1),
// kept in increasing order.
template <class Leaf>
std::vector<SizePoint> read_measured(SpecReader& reader, const SpecReader::Field& field, Leaf leaf) {
  std::vector<SizePoint> points;
  if (!reader.ok() || !reader.expect_object(*field.value, field.pointer)) return points;
  for (auto it = field.value->begin(); it != field.value->end() && reader.ok(); ++it) {
    const std::string pointer = pointer_child(field.pointer, it.key());
    const std::string& key = it.key();
    const bool digits = !key.empty() && key.size() <= 6 && key[0] != '0' &&
                        key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      reader.fail(pointer, nullptr, "a measured size must be a whole number from 1 to 999999");
      break;
    }
    SpecReader::Field inner = field;
    inner.value = &*it;
    inner.pointer = pointer;
    points.push_back(SizePoint{std::stoi(key), leaf(inner)});
  }
  std::sort(points.begin(), points.end(), [](const SizePoint& a, const SizePoint& b) { return a.size < b.size; });
  if (reader.ok() && points.empty()) reader.fail(field.pointer, field.value, "give at least one measured size");
  return points;
}

// A string/number (per-sample shorthand) or {"fixed": .., "per_sample": .., "measured": {..}},
// with "size_block": n beside a table when `blockable` (durations).
template <class Leaf>
Scaled read_scaled(SpecReader& reader, const SpecReader::Field& field, Leaf leaf, bool blockable) {
  Scaled out;
  if (!reader.ok() || field.value == nullptr) return out;
  if (!field.value->is_object()) {
    out.per_sample = leaf(field);
    return out;
  }
  if (blockable) {
    reader.allow_keys(*field.value, field.pointer, {"fixed", "per_sample", "measured", "size_block"});
  } else {
    reader.allow_keys(*field.value, field.pointer, {"fixed", "per_sample", "measured"});
  }
  std::int64_t* parts[2] = {&out.fixed, &out.per_sample};
  const char* keys[2] = {"fixed", "per_sample"};
  for (int i = 0; i < 2; ++i) {
    const auto it = field.value->find(keys[i]);
    if (it == field.value->end()) continue;
    SpecReader::Field inner = field;
    inner.value = &*it;
    inner.pointer = pointer_child(field.pointer, keys[i]);
    *parts[i] = leaf(inner);
  }
  if (const auto it = field.value->find("measured"); it != field.value->end()) {
    SpecReader::Field table = field;
    table.value = &*it;
    table.pointer = pointer_child(field.pointer, "measured");
    out.measured = read_measured(reader, table, leaf);
  }
  if (blockable && field.value->contains("size_block")) {
    const std::int64_t block = reader.integer(*field.value, field.pointer, "size_block", 1, std::nullopt);
    if (reader.ok() && (block > kMaxSizeBlock || out.measured.empty())) {
      reader.fail(pointer_child(field.pointer, "size_block"), &field.value->at("size_block"),
                  out.measured.empty() ? "needs a 'measured' table" : fmt::format("must be at most {}", kMaxSizeBlock));
    }
    if (reader.ok()) out.size_block = static_cast<int>(block);
  }
  if (reader.ok() && field.value->empty()) {
    reader.fail(field.pointer, field.value, "give 'fixed', 'per_sample' and/or 'measured'");
  }
  return out;
}

ScaledDuration scaled_duration(SpecReader& reader, const Json& object, const std::string& pointer,
                               std::string_view name, bool required) {
  const SpecReader::Field field = reader.field(object, pointer, name, "_ns");
  if (reader.ok() && field.value == nullptr && required) {
    reader.fail(field.pointer, nullptr, "missing required field");
  }
  Scaled s = read_scaled(reader, field, [&](const SpecReader::Field& f) { return reader.duration_value(f); }, true);
  return ScaledDuration{s.fixed, s.per_sample, std::move(s.measured), s.size_block};
}

ScaledBytes scaled_bytes(SpecReader& reader, const Json& object, const std::string& pointer,
                         std::string_view name) {
  const SpecReader::Field field = reader.field(object, pointer, name, "_bytes");
  Scaled s = read_scaled(reader, field, [&](const SpecReader::Field& f) { return reader.bytes_value(f); }, false);
  return ScaledBytes{s.fixed, s.per_sample, std::move(s.measured)};
}

bool has_any(const Json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (object.contains(key)) return true;
  }
  return false;
}

// "rank_times": [{"tp": 2, "forward": .., "backward_input": .., "backward_weight": ..}, ..]
std::vector<TensorParallelSplit::RankTimes> read_rank_times(SpecReader& reader, const Json& list, const std::string& pointer) {
  std::vector<TensorParallelSplit::RankTimes> out;
  if (!reader.expect_array(list, pointer)) return out;
  for (std::size_t i = 0; i < list.size() && reader.ok(); ++i) {
    const std::string at = pointer_index(pointer, i);
    if (!reader.expect_object(list[i], at)) break;
    reader.allow_keys(list[i], at, {"tp", "forward", "backward_input", "backward_weight"});
    TensorParallelSplit::RankTimes entry;
    const std::int64_t tp = reader.integer(list[i], at, "tp", 2, std::nullopt);
    if (reader.ok() && (tp > kMaxTensorParallel || (!out.empty() && tp <= out.back().tp))) {
      reader.fail(pointer_child(at, "tp"), &list[i]["tp"],
                  fmt::format("group sizes must be at most {} and strictly increasing", kMaxTensorParallel));
    }
    entry.tp = static_cast<int>(std::min<std::int64_t>(tp, kMaxTensorParallel));
    entry.forward = scaled_duration(reader, list[i], at, "forward", true);
    entry.backward_input = scaled_duration(reader, list[i], at, "backward_input", true);
    entry.backward_weight = scaled_duration(reader, list[i], at, "backward_weight", true);
    out.push_back(std::move(entry));
  }
  return out;
}

// "tensor_parallel": {"forward_collectives": 2, "backward_collectives": 2, "collective_bytes": ..,
// "replicated_stash_fraction": 0.29, "replicated_param_bytes": ..}
TensorParallelSplit read_split(SpecReader& reader, const Json& object, const std::string& pointer) {
  TensorParallelSplit split;
  if (!reader.expect_object(object, pointer)) return split;
  reader.allow_keys(object, pointer, {"forward_collectives", "backward_collectives", "collective_bytes",
                                      "replicated_stash_fraction", "replicated_param_bytes", "rank_times"});
  for (const auto& [key, count] : {std::pair{"forward_collectives", &split.forward_collectives},
                                   std::pair{"backward_collectives", &split.backward_collectives}}) {
    const std::int64_t value = reader.integer(object, pointer, key, 0, std::int64_t{0});
    if (reader.ok() && value > kMaxTensorParallelCollectives) {
      reader.fail(pointer_child(pointer, key), &object[key], fmt::format("must be at most {}", kMaxTensorParallelCollectives));
    }
    if (reader.ok()) *count = static_cast<int>(value);
  }
  split.collective_bytes = scaled_bytes(reader, object, pointer, "collective_bytes");
  if (const auto it = object.find("replicated_stash_fraction"); reader.ok() && it != object.end()) {
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1)) {
      reader.fail(pointer_child(pointer, "replicated_stash_fraction"), &*it, "expected a number from 0 to 1");
    } else {
      split.replicated_stash_fraction = it->get<double>();
    }
  }
  split.replicated_param_bytes = reader.bytes(object, pointer, "replicated_param_bytes", Bytes{0});
  if (const auto it = object.find("rank_times"); reader.ok() && it != object.end()) {
    split.rank_times = read_rank_times(reader, *it, pointer_child(pointer, "rank_times"));
  }
  return split;
}

LayerSpec read_layer(SpecReader& reader, const Json& object, const std::string& pointer) {
  LayerSpec layer;
  if (!reader.expect_object(object, pointer)) return layer;
  reader.allow_keys(object, pointer,
                    {"name", "forward", "forward_ns", "backward", "backward_ns", "backward_input",
                     "backward_input_ns", "backward_weight", "backward_weight_ns", "output_bytes",
                     "stash_bytes", "param_bytes", "forward_no_grad", "forward_no_grad_ns",
                     "backward_transient_bytes", "split_held_bytes", "tensor_parallel"});
  layer.name = reader.string(object, pointer, "name", std::nullopt);
  if (reader.ok() && layer.name.empty()) {
    reader.fail(pointer_child(pointer, "name"), &object["name"], "must not be empty");
  }
  layer.forward = scaled_duration(reader, object, pointer, "forward", true);
  const bool full = has_any(object, {"backward", "backward_ns"});
  const bool split = has_any(object, {"backward_input", "backward_input_ns", "backward_weight",
                                      "backward_weight_ns"});
  if (split) {
    layer.backward_input = scaled_duration(reader, object, pointer, "backward_input", true);
    layer.backward_weight = scaled_duration(reader, object, pointer, "backward_weight", true);
    layer.backward_split = true;
    if (full) layer.whole_backward = scaled_duration(reader, object, pointer, "backward", true);
    if (reader.ok() && backward_overflows(layer)) {
      reader.fail(pointer, nullptr, "backward_input + backward_weight overflows 64 bits");
    }
  } else {
    layer.set_backward(scaled_duration(reader, object, pointer, "backward", true));
  }
  layer.output_bytes = scaled_bytes(reader, object, pointer, "output_bytes");
  layer.stash_bytes = scaled_bytes(reader, object, pointer, "stash_bytes");
  layer.param_bytes = reader.bytes(object, pointer, "param_bytes", Bytes{0});
  if (has_any(object, {"forward_no_grad", "forward_no_grad_ns"})) {
    layer.forward_no_grad = scaled_duration(reader, object, pointer, "forward_no_grad", true);
  }
  layer.backward_transient_bytes = scaled_bytes(reader, object, pointer, "backward_transient_bytes");
  if (has_any(object, {"split_held_bytes"})) layer.split_held_bytes = scaled_bytes(reader, object, pointer, "split_held_bytes");
  if (reader.ok() && object.contains("tensor_parallel")) {
    const std::string split_pointer = pointer_child(pointer, "tensor_parallel");
    layer.tensor_parallel = read_split(reader, object["tensor_parallel"], split_pointer);
    if (reader.ok() && layer.tensor_parallel->replicated_param_bytes > layer.param_bytes) {
      reader.fail(pointer_child(split_pointer, "replicated_param_bytes"), &object["tensor_parallel"]["replicated_param_bytes"],
                  "more than the layer's param_bytes");
    }
  }
  return layer;
}

// {"layers": [begin, end], "forward": .., "forward_no_grad": .., "first_backward": .., "later_backward": ..}
StageTemporaries read_temporaries(SpecReader& reader, const Json& object, const std::string& pointer, int layers) {
  StageTemporaries t;
  if (!reader.expect_object(object, pointer)) return t;
  reader.allow_keys(object, pointer, {"layers", "forward", "forward_no_grad", "first_backward", "later_backward"});
  const std::string range_pointer = pointer_child(pointer, "layers");
  const auto range = object.find("layers");
  const bool pair = range != object.end() && range->is_array() && range->size() == 2 &&
                    (*range)[0].is_number_integer() && (*range)[1].is_number_integer();
  if (reader.ok() && !pair) {
    reader.fail(range_pointer, range == object.end() ? nullptr : &*range,
                range == object.end() ? "missing required field ([first layer, one past the last])"
                                      : "expected [first layer, one past the last]");
    return t;
  }
  if (!reader.ok()) return t;
  const auto begin = (*range)[0].get<std::int64_t>();
  const auto end = (*range)[1].get<std::int64_t>();
  if (begin < 0 || end <= begin || end > layers) {
    reader.fail(range_pointer, &*range, fmt::format("not a range of the model's {} layers", layers));
    return t;
  }
  t.begin = static_cast<int>(begin);
  t.end = static_cast<int>(end);
  t.forward = scaled_bytes(reader, object, pointer, "forward");
  t.forward_no_grad = scaled_bytes(reader, object, pointer, "forward_no_grad");
  t.first_backward = scaled_bytes(reader, object, pointer, "first_backward");
  t.later_backward = scaled_bytes(reader, object, pointer, "later_backward");
  return t;
}

void read_all_temporaries(SpecReader& reader, const Json& root, ModelSpec& spec) {
  if (!reader.ok() || !root.contains("stage_temporaries")) return;
  const Json& list = root["stage_temporaries"];
  if (!reader.expect_array(list, "/stage_temporaries")) return;
  std::set<std::pair<int, int>> seen;
  for (std::size_t i = 0; i < list.size() && reader.ok(); ++i) {
    const std::string pointer = pointer_index("/stage_temporaries", i);
    spec.stage_temporaries.push_back(read_temporaries(reader, list[i], pointer, spec.num_layers()));
    const StageTemporaries& t = spec.stage_temporaries.back();
    if (reader.ok() && !seen.emplace(t.begin, t.end).second) {
      reader.fail(pointer_child(pointer, "layers"), &list[i]["layers"], "this range is given twice");
    }
  }
}

ParamDtype read_dtype(SpecReader& reader, const Json& root) {
  const std::string text = reader.string(root, "", "param_dtype", std::string("fp32"));
  for (const ParamDtype dtype : {ParamDtype::kFp32, ParamDtype::kFp16, ParamDtype::kBf16}) {
    if (dtype_name(dtype) == text) return dtype;
  }
  reader.fail("/param_dtype", &root["param_dtype"], "expected \"fp32\", \"fp16\" or \"bf16\"");
  return ParamDtype::kFp32;
}

// The shorthand (a bare per-sample value) when there is neither a fixed part nor a table.
template <class ToString>
OrderedJson scaled_json(std::int64_t fixed, std::int64_t per_sample, const std::vector<SizePoint>& measured,
                        ToString to_string) {
  if (fixed == 0 && measured.empty()) return to_string(per_sample);
  OrderedJson out{{"fixed", to_string(fixed)}, {"per_sample", to_string(per_sample)}};
  if (!measured.empty()) {
    OrderedJson table = OrderedJson::object();
    for (const SizePoint& p : measured) table[std::to_string(p.size)] = to_string(p.value);
    out["measured"] = std::move(table);
  }
  return out;
}

OrderedJson duration_json(const ScaledDuration& d) {
  OrderedJson out = scaled_json(d.fixed_ns, d.per_sample_ns, d.measured, exact_duration_string);
  if (d.size_block != 1) out["size_block"] = d.size_block;
  return out;
}

OrderedJson bytes_json(const ScaledBytes& b) {
  return scaled_json(b.fixed_bytes, b.per_sample_bytes, b.measured, exact_bytes_string);
}

OrderedJson split_json(const TensorParallelSplit& t) {
  OrderedJson out{{"forward_collectives", t.forward_collectives},
                  {"backward_collectives", t.backward_collectives},
                  {"collective_bytes", bytes_json(t.collective_bytes)},
                  {"replicated_stash_fraction", t.replicated_stash_fraction},
                  {"replicated_param_bytes", exact_bytes_string(t.replicated_param_bytes)}};
  if (t.rank_times.empty()) return out;
  OrderedJson list = OrderedJson::array();
  for (const TensorParallelSplit::RankTimes& r : t.rank_times) {
    list.push_back(OrderedJson{{"tp", r.tp}, {"forward", duration_json(r.forward)},
                               {"backward_input", duration_json(r.backward_input)},
                               {"backward_weight", duration_json(r.backward_weight)}});
  }
  out["rank_times"] = std::move(list);
  return out;
}

}  // namespace

sched::Result<ModelSpec> parse_model_spec(std::string_view json_text, std::string_view source) {
  auto parsed = parse_spec_json(json_text, source);
  if (!parsed) return parsed.error();
  const Json& root = *parsed;
  SpecReader reader{std::string(source)};
  ModelSpec spec;
  if (!reader.expect_object(root, "")) return reader.error();
  reader.allow_keys(root, "", {"name", "description", "param_dtype", "input_bytes", "layers", "stage_temporaries",
                               "flops_per_sample", "tokens_per_sample", "tensor_parallel", "sequence_parallel",
                               "tensor_parallel_overlap"});
  spec.name = reader.string(root, "", "name", std::nullopt);
  spec.description = reader.string(root, "", "description", std::string());
  spec.param_dtype = read_dtype(reader, root);
  spec.input_bytes = scaled_bytes(reader, root, "", "input_bytes");
  if (root.contains("flops_per_sample")) spec.flops_per_sample = reader.positive_number(root, "", "flops_per_sample", std::nullopt);
  if (root.contains("tokens_per_sample")) spec.tokens_per_sample = reader.integer(root, "", "tokens_per_sample", 1, std::nullopt);
  spec.tensor_parallel = static_cast<int>(std::min<std::int64_t>(
      reader.integer(root, "", "tensor_parallel", 1, std::int64_t{1}), kMaxTensorParallel + 1));
  if (reader.ok() && spec.tensor_parallel > kMaxTensorParallel) {
    reader.fail("/tensor_parallel", &root["tensor_parallel"], fmt::format("must be at most {}", kMaxTensorParallel));
  }
  for (const auto& [key, flag] : {std::pair{"sequence_parallel", &spec.sequence_parallel},
                                   std::pair{"tensor_parallel_overlap", &spec.tensor_parallel_overlap}}) {
    const auto it = root.find(key);
    if (!reader.ok() || it == root.end()) continue;
    const std::string pointer = pointer_child("", key);
    if (!it->is_boolean()) reader.fail(pointer, &*it, "expected true or false");
    else *flag = it->get<bool>();
    if (reader.ok() && *flag && spec.tensor_parallel == 1) reader.fail(pointer, &*it, "needs tensor_parallel above 1");
  }
  if (reader.ok() && !root.contains("layers")) reader.fail("/layers", nullptr, "missing required field");
  if (!reader.ok()) return reader.error();
  const Json& layers = root["layers"];
  if (!reader.expect_array(layers, "/layers")) return reader.error();
  if (layers.empty()) reader.fail("/layers", &layers, "needs at least one layer");
  if (layers.size() > static_cast<std::size_t>(kMaxModelLayers)) {
    reader.fail("/layers", nullptr, fmt::format("{} layers; at most {} are supported", layers.size(), kMaxModelLayers));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < layers.size() && reader.ok(); ++i) {
    const std::string pointer = pointer_index("/layers", i);
    spec.layers.push_back(read_layer(reader, layers[i], pointer));
    if (reader.ok() && !names.insert(spec.layers.back().name).second) {
      reader.fail(pointer_child(pointer, "name"), &layers[i]["name"], "duplicate layer name");
    }
  }
  read_all_temporaries(reader, root, spec);
  if (!reader.ok()) return reader.error();
  return spec;
}

sched::Result<ModelSpec> load_model_spec(const std::string& path) {
  auto text = read_spec_file(path);
  if (!text) return text.error();
  return parse_model_spec(*text, path);
}

std::string model_spec_to_json(const ModelSpec& spec) {
  OrderedJson root;
  root["name"] = spec.name;
  if (!spec.description.empty()) root["description"] = spec.description;
  root["param_dtype"] = std::string(dtype_name(spec.param_dtype));
  if (spec.input_bytes != ScaledBytes{}) root["input_bytes"] = bytes_json(spec.input_bytes);
  if (spec.flops_per_sample > 0) root["flops_per_sample"] = spec.flops_per_sample;
  if (spec.tokens_per_sample > 0) root["tokens_per_sample"] = spec.tokens_per_sample;
  if (spec.tensor_parallel != 1) root["tensor_parallel"] = spec.tensor_parallel;
  if (spec.sequence_parallel) root["sequence_parallel"] = true;
  if (spec.tensor_parallel_overlap) root["tensor_parallel_overlap"] = true;
  OrderedJson layers = OrderedJson::array();
  for (const LayerSpec& layer : spec.layers) {
    OrderedJson out;
    out["name"] = layer.name;
    out["forward"] = duration_json(layer.forward);
    if (layer.backward_split) {
      if (layer.whole_backward) out["backward"] = duration_json(*layer.whole_backward);
      out["backward_input"] = duration_json(layer.backward_input);
      out["backward_weight"] = duration_json(layer.backward_weight);
    } else {
      out["backward"] = duration_json(layer.backward());
    }
    out["output_bytes"] = bytes_json(layer.output_bytes);
    out["stash_bytes"] = bytes_json(layer.stash_bytes);
    out["param_bytes"] = exact_bytes_string(layer.param_bytes);
    if (layer.forward_no_grad) out["forward_no_grad"] = duration_json(*layer.forward_no_grad);
    if (layer.backward_transient_bytes != ScaledBytes{}) {
      out["backward_transient_bytes"] = bytes_json(layer.backward_transient_bytes);
    }
    if (layer.split_held_bytes) out["split_held_bytes"] = bytes_json(*layer.split_held_bytes);
    if (layer.tensor_parallel) out["tensor_parallel"] = split_json(*layer.tensor_parallel);
    layers.push_back(std::move(out));
  }
  root["layers"] = std::move(layers);
  if (!spec.stage_temporaries.empty()) {
    OrderedJson list = OrderedJson::array();
    for (const StageTemporaries& t : spec.stage_temporaries) {
      list.push_back(OrderedJson{{"layers", {t.begin, t.end}},
                                 {"forward", bytes_json(t.forward)},
                                 {"forward_no_grad", bytes_json(t.forward_no_grad)},
                                 {"first_backward", bytes_json(t.first_backward)},
                                 {"later_backward", bytes_json(t.later_backward)}});
    }
    root["stage_temporaries"] = std::move(list);
  }
  return root.dump(2) + "\n";
}

sched::Status save_model_spec(const ModelSpec& spec, const std::string& path) {
  return sched::write_text_file(path, model_spec_to_json(spec));
}

}  // namespace pipeworks::sim
