// Model spec <-> JSON (format in docs/model_spec.md). Reading goes through SpecReader so every
// error names its field by JSON pointer; writing uses exact unit strings so files round-trip.
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "sim/model_spec.h"
#include "sim/spec_json.h"

namespace pipeworks::sim {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A scaled quantity: a string/number (per-sample shorthand) or {"fixed": .., "per_sample": ..}.
template <class Leaf>
std::pair<std::int64_t, std::int64_t> read_scaled(SpecReader& reader, const SpecReader::Field& field,
                                                  Leaf leaf) {
  if (!reader.ok() || field.value == nullptr) return {0, 0};
  if (!field.value->is_object()) return {0, leaf(field)};
  reader.allow_keys(*field.value, field.pointer, {"fixed", "per_sample"});
  std::int64_t parts[2] = {0, 0};
  const char* keys[2] = {"fixed", "per_sample"};
  for (int i = 0; i < 2; ++i) {
    const auto it = field.value->find(keys[i]);
    if (it == field.value->end()) continue;
    SpecReader::Field inner = field;
    inner.value = &*it;
    inner.pointer = pointer_child(field.pointer, keys[i]);
    parts[i] = leaf(inner);
  }
  if (reader.ok() && field.value->empty()) {
    reader.fail(field.pointer, field.value, "give 'fixed' and/or 'per_sample'");
  }
  return {parts[0], parts[1]};
}

ScaledDuration scaled_duration(SpecReader& reader, const Json& object, const std::string& pointer,
                               std::string_view name, bool required) {
  const SpecReader::Field field = reader.field(object, pointer, name, "_ns");
  if (reader.ok() && field.value == nullptr && required) {
    reader.fail(field.pointer, nullptr, "missing required field");
  }
  const auto [fixed, per_sample] =
      read_scaled(reader, field, [&](const SpecReader::Field& f) { return reader.duration_value(f); });
  return ScaledDuration{fixed, per_sample};
}

ScaledBytes scaled_bytes(SpecReader& reader, const Json& object, const std::string& pointer,
                         std::string_view name) {
  const SpecReader::Field field = reader.field(object, pointer, name, "_bytes");
  const auto [fixed, per_sample] =
      read_scaled(reader, field, [&](const SpecReader::Field& f) { return reader.bytes_value(f); });
  return ScaledBytes{fixed, per_sample};
}

bool has_any(const Json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (object.contains(key)) return true;
  }
  return false;
}

LayerSpec read_layer(SpecReader& reader, const Json& object, const std::string& pointer) {
  LayerSpec layer;
  if (!reader.expect_object(object, pointer)) return layer;
  reader.allow_keys(object, pointer,
                    {"name", "forward", "forward_ns", "backward", "backward_ns", "backward_input",
                     "backward_input_ns", "backward_weight", "backward_weight_ns", "output_bytes",
                     "stash_bytes", "param_bytes"});
  layer.name = reader.string(object, pointer, "name", std::nullopt);
  if (reader.ok() && layer.name.empty()) {
    reader.fail(pointer_child(pointer, "name"), &object["name"], "must not be empty");
  }
  layer.forward = scaled_duration(reader, object, pointer, "forward", true);
  const bool full = has_any(object, {"backward", "backward_ns"});
  const bool split = has_any(object, {"backward_input", "backward_input_ns", "backward_weight",
                                      "backward_weight_ns"});
  if (reader.ok() && full && split) {
    reader.fail(pointer, nullptr,
                "give either 'backward' or 'backward_input' and 'backward_weight', not both");
  } else if (split) {
    layer.backward_input = scaled_duration(reader, object, pointer, "backward_input", true);
    layer.backward_weight = scaled_duration(reader, object, pointer, "backward_weight", true);
    layer.backward_split = true;
  } else {
    layer.set_backward(scaled_duration(reader, object, pointer, "backward", true));
  }
  layer.output_bytes = scaled_bytes(reader, object, pointer, "output_bytes");
  layer.stash_bytes = scaled_bytes(reader, object, pointer, "stash_bytes");
  layer.param_bytes = reader.bytes(object, pointer, "param_bytes", Bytes{0});
  return layer;
}

ParamDtype read_dtype(SpecReader& reader, const Json& root) {
  const std::string text = reader.string(root, "", "param_dtype", std::string("fp32"));
  for (const ParamDtype dtype : {ParamDtype::kFp32, ParamDtype::kFp16, ParamDtype::kBf16}) {
    if (dtype_name(dtype) == text) return dtype;
  }
  reader.fail("/param_dtype", &root["param_dtype"], "expected \"fp32\", \"fp16\" or \"bf16\"");
  return ParamDtype::kFp32;
}

OrderedJson duration_json(const ScaledDuration& d) {
  if (d.fixed_ns == 0) return exact_duration_string(d.per_sample_ns);
  return OrderedJson{{"fixed", exact_duration_string(d.fixed_ns)},
                     {"per_sample", exact_duration_string(d.per_sample_ns)}};
}

OrderedJson bytes_json(const ScaledBytes& b) {
  if (b.fixed_bytes == 0) return exact_bytes_string(b.per_sample_bytes);
  return OrderedJson{{"fixed", exact_bytes_string(b.fixed_bytes)},
                     {"per_sample", exact_bytes_string(b.per_sample_bytes)}};
}

}  // namespace

sched::Result<ModelSpec> parse_model_spec(std::string_view json_text, std::string_view source) {
  auto parsed = parse_spec_json(json_text, source);
  if (!parsed) return parsed.error();
  const Json& root = *parsed;
  SpecReader reader{std::string(source)};
  ModelSpec spec;
  if (!reader.expect_object(root, "")) return reader.error();
  reader.allow_keys(root, "", {"name", "description", "param_dtype", "input_bytes", "layers"});
  spec.name = reader.string(root, "", "name", std::nullopt);
  spec.description = reader.string(root, "", "description", std::string());
  spec.param_dtype = read_dtype(reader, root);
  spec.input_bytes = scaled_bytes(reader, root, "", "input_bytes");
  if (reader.ok() && !root.contains("layers")) reader.fail("/layers", nullptr, "missing required field");
  if (!reader.ok()) return reader.error();
  const Json& layers = root["layers"];
  if (!reader.expect_array(layers, "/layers")) return reader.error();
  if (layers.empty()) reader.fail("/layers", &layers, "needs at least one layer");
  std::set<std::string> names;
  for (std::size_t i = 0; i < layers.size() && reader.ok(); ++i) {
    const std::string pointer = pointer_index("/layers", i);
    spec.layers.push_back(read_layer(reader, layers[i], pointer));
    if (reader.ok() && !names.insert(spec.layers.back().name).second) {
      reader.fail(pointer_child(pointer, "name"), &layers[i]["name"], "duplicate layer name");
    }
  }
  if (!reader.ok()) return reader.error();
  return spec;
}

sched::Result<ModelSpec> load_model_spec(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_model_spec(*text, path);
}

std::string model_spec_to_json(const ModelSpec& spec) {
  OrderedJson root;
  root["name"] = spec.name;
  if (!spec.description.empty()) root["description"] = spec.description;
  root["param_dtype"] = std::string(dtype_name(spec.param_dtype));
  if (spec.input_bytes != ScaledBytes{}) root["input_bytes"] = bytes_json(spec.input_bytes);
  OrderedJson layers = OrderedJson::array();
  for (const LayerSpec& layer : spec.layers) {
    OrderedJson out;
    out["name"] = layer.name;
    out["forward"] = duration_json(layer.forward);
    if (layer.backward_split) {
      out["backward_input"] = duration_json(layer.backward_input);
      out["backward_weight"] = duration_json(layer.backward_weight);
    } else {
      out["backward"] = duration_json(layer.backward());
    }
    out["output_bytes"] = bytes_json(layer.output_bytes);
    out["stash_bytes"] = bytes_json(layer.stash_bytes);
    out["param_bytes"] = exact_bytes_string(layer.param_bytes);
    layers.push_back(std::move(out));
  }
  root["layers"] = std::move(layers);
  return root.dump(2) + "\n";
}

sched::Status save_model_spec(const ModelSpec& spec, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return sched::Error{fmt::format("{}: cannot open for writing", path), std::nullopt};
  out << model_spec_to_json(spec);
  if (!out) return sched::Error{fmt::format("{}: write failed", path), std::nullopt};
  return sched::Ok{};
}

}  // namespace pipeworks::sim
