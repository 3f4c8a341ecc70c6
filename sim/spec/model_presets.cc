// The model presets: closed-form per-layer costs from the formulas cited in model_presets.h.
#include "sim/spec/model_presets.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "sim/spec/cluster_presets.h"
#include "sim/spec/gpt_kernels.h"

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

Nanoseconds flops_to_ns(double flops, double flops_per_s) {
  return std::llround(flops / flops_per_s * 1e9);
}

// Ok when the largest per-sample layer work of a preset, `largest_flops`, takes at most
// kMaxPresetLayerNs at `flops_per_s`; else an error naming the rate, the time and the limit.
sched::Status check_flop_rate(double largest_flops, double flops_per_s) {
  const double ns = largest_flops / flops_per_s * 1e9;
  if (ns <= kMaxPresetLayerNs) return sched::Ok{};
  return error(fmt::format("option 'flops_per_s' is {:g} FLOP/s: the preset's largest layer ({:g} FLOPs per sample) "
                           "would take {:g} ns per sample, beyond the {:g} ns (11.6 days) a preset layer may take; "
                           "the rate must be at least {:g} FLOP/s",
                           flops_per_s, largest_flops, ns, kMaxPresetLayerNs, largest_flops * 1e9 / kMaxPresetLayerNs));
}

// A GPT's largest per-sample layer work: a block's backward input (matmul + 3 x the attention
// core's forward, with selective recompute) or the head (see gpt_block, gpt_model).
double gpt_largest_flops(const GptConfig& c) {
  const auto s = static_cast<double>(c.sequence);
  const auto h = static_cast<double>(c.hidden);
  return std::max(24 * s * h * h + 12 * s * s * h, 2 * s * h * static_cast<double>(c.vocab));
}

// The AmoebaNet-like model's largest: a group-2 normal cell's backward (2 x 4e9 FLOPs).
constexpr double kAmoebaLargestFlops = 8e9;

LayerSpec layer(std::string name, Nanoseconds forward_ns, Bytes output_bytes, Bytes stash_bytes,
                Bytes param_bytes) {
  LayerSpec spec;
  spec.name = std::move(name);
  spec.forward.per_sample_ns = forward_ns;
  spec.output_bytes.per_sample_bytes = output_bytes;
  spec.stash_bytes.per_sample_bytes = stash_bytes;
  spec.param_bytes = param_bytes;
  return spec;
}

TensorParallelSplit gpt_split(int forward, int backward, Bytes buffer, double replicated_stash, Bytes replicated_params) {
  TensorParallelSplit split;
  split.forward_collectives = forward;
  split.backward_collectives = backward;
  split.collective_bytes.per_sample_bytes = buffer;
  split.replicated_stash_fraction = replicated_stash;
  split.replicated_param_bytes = replicated_params;
  return split;
}

struct Preset {
  std::string_view name;
  std::string_view description;
  const GptConfig* gpt;  // null unless a GPT config
};

constexpr std::string_view kGptSource =
    "FLOPs 24sh^2+4s^2h per block (Narayanan et al. 2021), stash sh(34+5as/h) (Korthikanti et "
    "al. 2022), bf16 params";

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"uniform", "L equal layers (default 8; 1ms forward, 2ms backward per sample, 1MiB output, "
                  "4MiB stash, 16MiB params)", nullptr},
      {"gpt", "GPT with overridable dims (defaults: GPT-2 small); see gpt3-175b for formulas", &kGpt2Small},
      {"gpt2-small", "GPT-2 small, 124M: 12 blocks, h=768, 12 heads, s=1024, V=50257", &kGpt2Small},
      {"gpt2-medium", "GPT-2 medium, 350M: 24 blocks, h=1024, 16 heads, s=1024, V=50257", &kGpt2Medium},
      {"gpt3-1.3b", "GPT-3 XL, 1.3B: 24 blocks, h=2048, 16 heads, s=2048 (Brown et al. 2020)", &kGpt3Xl},
      {"gpt3-175b", "GPT-3 175B: 96 blocks, h=12288, 96 heads, s=2048, V=50257 (Brown et al. 2020)",
       &kGpt3_175b},
      {"amoeba", "AmoebaNet-like image model with very uneven cells (illustrative formula, not "
                 "measured); default 18 normal cells", nullptr},
  };
  return kPresets;
}

// Options other than `allowed` must be unset.
sched::Status check_options(std::string_view preset, const PresetOptions& o,
                            std::initializer_list<std::string_view> allowed) {
  const std::pair<std::string_view, bool> set[] = {
      {"layers", o.layers.has_value()},         {"hidden", o.hidden.has_value()},
      {"heads", o.heads.has_value()},           {"sequence", o.sequence.has_value()},
      {"vocab", o.vocab.has_value()},           {"flops_per_s", o.flops_per_s.has_value()},
      {"forward_ns", o.forward_ns.has_value()}, {"backward_ns", o.backward_ns.has_value()},
      {"output_bytes", o.output_bytes.has_value()}, {"stash_bytes", o.stash_bytes.has_value()},
      {"param_bytes", o.param_bytes.has_value()}, {"attention", o.attention.has_value()},
      {"gpu", o.gpu.has_value()}};
  for (const auto& [name, is_set] : set) {
    if (!is_set) continue;
    bool ok = false;
    for (const std::string_view a : allowed) ok = ok || a == name;
    if (!ok) return error(fmt::format("option '{}' does not apply to model preset '{}'", name, preset));
  }
  if (o.layers && (*o.layers < 1 || *o.layers > kMaxModelLayers)) {
    return error(fmt::format("layers must be in [1, {}], got {}", kMaxModelLayers, *o.layers));
  }
  if (o.flops_per_s && !(std::isfinite(*o.flops_per_s) && *o.flops_per_s > 0 && *o.flops_per_s <= kMaxPresetFlopsPerS)) {
    return error(fmt::format("option 'flops_per_s' must be in (0, {:g}]", kMaxPresetFlopsPerS));
  }
  for (const auto& v : {o.hidden, o.heads, o.sequence, o.vocab}) {
    if (v && *v < 1) return error("hidden, heads, sequence and vocab must be at least 1");
  }
  for (const auto& [v, most, option] : {std::tuple{o.hidden, kMaxPresetHidden, "hidden"},
                                        std::tuple{o.heads, kMaxPresetHidden, "heads"},
                                        std::tuple{o.sequence, kMaxPresetSequence, "sequence"},
                                        std::tuple{o.vocab, kMaxPresetVocab, "vocab"}}) {
    if (v && *v > most) return error(fmt::format("option '{}' must be in [1, {}], got {}", option, most, *v));
  }
  for (const auto& v : {o.forward_ns, o.backward_ns, o.output_bytes, o.stash_bytes, o.param_bytes}) {
    if (v && *v < 0) return error("uniform costs must not be negative");
  }
  return sched::Ok{};
}

}  // namespace

std::vector<PresetInfo> model_presets() {
  std::vector<PresetInfo> out;
  for (const Preset& p : presets()) {
    out.push_back(PresetInfo{std::string(p.name), std::string(p.description) +
                                                      (p.gpt != nullptr ? fmt::format("; {}", kGptSource) : "")});
  }
  return out;
}

std::int64_t gpt_parameter_count(const GptConfig& c) {
  const std::int64_t h = c.hidden;
  return (c.vocab + c.sequence) * h + c.layers * (12 * h * h + 13 * h) + 2 * h;
}

namespace {

// Block i: its FLOPs, stash and split as model_presets.h states them for `attention`.
LayerSpec gpt_block(int i, const GptConfig& c, double flops_per_s, AttentionActivations attention) {
  const auto s = static_cast<double>(c.sequence);
  const auto h = static_cast<double>(c.hidden);
  const auto a = static_cast<double>(c.heads);
  const double matmul = 24 * s * h * h;
  const double core = 4 * s * s * h;  // the attention core's two products, forward
  double stash = s * h * (34 + 5 * a * s / h);
  double input_grad = matmul + 2 * core;
  if (attention == AttentionActivations::kSelectiveRecompute) {
    stash = 34 * s * h;
    input_grad += core;
  } else if (attention == AttentionActivations::kFlash) {
    stash = 34 * s * h + 4 * a * s;
    input_grad += core / 2;
  }
  const Bytes hidden_state = 2 * c.sequence * c.hidden;
  LayerSpec block = layer(fmt::format("block{}", i), flops_to_ns(matmul + core, flops_per_s), hidden_state,
                          std::llround(stash), 2 * (12 * c.hidden * c.hidden + 13 * c.hidden));
  block.backward_input.per_sample_ns = flops_to_ns(input_grad, flops_per_s);
  block.backward_weight.per_sample_ns = flops_to_ns(matmul, flops_per_s);
  block.backward_split = true;
  block.tensor_parallel = gpt_split(2, 2, hidden_state, 10 * s * h / stash, 2 * 6 * c.hidden);
  return block;
}

}  // namespace

std::string_view attention_name(AttentionActivations attention) {
  switch (attention) {
    case AttentionActivations::kStored: return "stored";
    case AttentionActivations::kSelectiveRecompute: return "selective-recompute";
    case AttentionActivations::kFlash: return "flash";
  }
  return "?";
}

sched::Result<AttentionActivations> parse_attention(std::string_view text) {
  for (const auto mode : {AttentionActivations::kStored, AttentionActivations::kSelectiveRecompute,
                          AttentionActivations::kFlash}) {
    if (attention_name(mode) == text) return mode;
  }
  return error(fmt::format("attention '{}': expected stored, selective-recompute or flash", text));
}

ModelSpec gpt_model(std::string name, const GptConfig& c, double flops_per_s, AttentionActivations attention) {
  const auto s = static_cast<double>(c.sequence);
  const auto h = static_cast<double>(c.hidden);
  const auto v = static_cast<double>(c.vocab);
  ModelSpec spec;
  spec.name = std::move(name);
  spec.description = fmt::format("GPT: {} blocks, h={}, {} heads, s={}, V={}, attention core {}, {}; times at {}",
                                 c.layers, c.hidden, c.heads, c.sequence, c.vocab, attention_name(attention), kGptSource,
                                 format_flop_rate(flops_per_s));
  spec.param_dtype = ParamDtype::kBf16;
  spec.input_bytes.per_sample_bytes = 8 * c.sequence;
  const Bytes hidden_state = 2 * c.sequence * c.hidden;

  LayerSpec embedding = layer("embedding", 0, hidden_state, 8 * c.sequence,
                              2 * (c.vocab + c.sequence) * c.hidden);
  embedding.set_backward(ScaledDuration{});
  embedding.tensor_parallel = gpt_split(1, 0, hidden_state, 1.0, 2 * c.sequence * c.hidden);
  spec.layers.push_back(embedding);

  for (int i = 0; i < c.layers; ++i) spec.layers.push_back(gpt_block(i, c, flops_per_s, attention));

  const double head_flops = 2 * s * h * v;
  LayerSpec head = layer("lm_head", flops_to_ns(head_flops, flops_per_s), 2 * c.sequence * c.vocab,
                         hidden_state + 4 * c.sequence * c.vocab,
                         2 * (c.vocab * c.hidden + 2 * c.hidden));
  head.backward_input.per_sample_ns = flops_to_ns(head_flops, flops_per_s);
  head.backward_weight.per_sample_ns = flops_to_ns(head_flops, flops_per_s);
  head.backward_split = true;
  head.tensor_parallel = gpt_split(0, 1, hidden_state, static_cast<double>(hidden_state) / static_cast<double>(head.stash_bytes.per_sample_bytes),
                                   2 * 2 * c.hidden);
  spec.layers.push_back(head);
  // Forward, backward input and weight gradients of the blocks and the head, as above: Megatron's
  // 72 L s h^2 (1 + s / 6h + V / 12 h L) per sample (Narayanan et al. 2021, sec. 5.1, without
  // re-materialization).
  spec.flops_per_sample = c.layers * (3 * 24 * s * h * h + 3 * 4 * s * s * h) + 3 * head_flops;
  spec.tokens_per_sample = c.sequence;
  return spec;
}

namespace {

// One layer's pass times as size tables (model_presets.h), from its kernels at each size.
struct PassTables {
  ScaledDuration forward;
  ScaledDuration input_grad;
  ScaledDuration weight_grad;
};

template <class Kernels>
sched::Result<PassTables> pass_tables(std::string_view layer, Kernels kernels_at) {
  PassTables out;
  for (int b = 1; b <= kGptKernelSizes; b *= 2) {
    const PassKernelNs ns = kernels_at(b);
    for (const auto& [value, table] : {std::pair{ns.forward, &out.forward}, std::pair{ns.input_grad, &out.input_grad},
                                       std::pair{ns.weight_grad, &out.weight_grad}}) {
      if (!(value <= kMaxPresetLayerNs * b)) {
        return error(fmt::format("layer '{}' would take {:g} ns for a micro-batch of {}, beyond the {:g} ns per sample a "
                                 "preset layer may take", layer, value, b, kMaxPresetLayerNs));
      }
      table->measured.push_back(SizePoint{b, std::llround(value)});
    }
  }
  for (ScaledDuration* table : {&out.forward, &out.input_grad, &out.weight_grad}) {
    const SizePoint& last = table->measured.back();
    const SizePoint& before = table->measured[table->measured.size() - 2];
    table->per_sample_ns = std::max<std::int64_t>(0, (last.value - before.value) / (last.size - before.size));
  }
  return out;
}

// The layer's times at tp 1, and a rank's for every tp = 2, 4, .. 64 dividing the heads.
template <class Kernels>
sched::Status time_layer(LayerSpec& l, const GptConfig& c, Kernels kernels) {
  l.tensor_parallel->rank_times.clear();
  for (int tp = 1; tp <= 64 && c.heads % tp == 0; tp *= 2) {
    auto tables = pass_tables(l.name, [&](int b) { return kernels(b, tp); });
    if (!tables) return tables.error();
    if (tp == 1) {
      l.forward = tables->forward;
      l.backward_input = tables->input_grad;
      l.backward_weight = tables->weight_grad;
    } else {
      l.tensor_parallel->rank_times.push_back({tp, tables->forward, tables->input_grad, tables->weight_grad});
    }
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<ModelSpec> gpt_model_on_gpu(std::string name, const GptConfig& c, const GpuKernelModel& gpu,
                                          AttentionActivations attention) {
  ModelSpec spec = gpt_model(std::move(name), c, kH100SustainedFlopsPerS, attention);
  spec.description = fmt::format("GPT: {} blocks, h={}, {} heads, s={}, V={}, attention core {}; times kernel by kernel "
                                 "on the {} GPU cost model (sim/spec/gpu_kernels/{}.json)",
                                 c.layers, c.hidden, c.heads, c.sequence, c.vocab, attention_name(attention), gpu.name,
                                 gpu.name);
  auto status = time_layer(spec.layers.front(), c, [&](int b, int tp) { return gpt_embedding_kernel_ns(c, b, tp, gpu); });
  if (status) {
    status = time_layer(spec.layers.back(), c, [&](int b, int tp) { return gpt_head_kernel_ns(c, b, tp, gpu); });
  }
  if (status && c.layers > 0) {
    status = time_layer(spec.layers[1], c,
                        [&](int b, int tp) { return gpt_block_kernel_ns(c, b, tp, attention, gpu); });
  }
  if (!status) return status.error();
  for (int i = 2; i <= c.layers; ++i) {
    const std::string block_name = spec.layers[i].name;
    spec.layers[i] = spec.layers[1];
    spec.layers[i].name = block_name;
  }
  return spec;
}

ModelSpec amoeba_model(int normal_cells, double flops_per_s) {
  constexpr double kF0 = 1e9;
  constexpr Bytes kA0 = 56LL * 56 * 256 * 4;
  constexpr Bytes kP0 = 9LL * 256 * 256 * 4;
  ModelSpec spec;
  spec.name = "amoeba";
  spec.description = fmt::format("AmoebaNet-like, {} normal cells in 3 groups (illustrative "
                                 "formula in model_presets.h); times at {}",
                                 normal_cells, format_flop_rate(flops_per_s));
  spec.input_bytes.per_sample_bytes = 224LL * 224 * 3 * 4;
  auto add = [&](std::string name, double flops, Bytes output, Bytes stash, Bytes params) {
    LayerSpec l = layer(std::move(name), flops_to_ns(flops, flops_per_s), output, stash, params);
    l.set_backward(ScaledDuration{0, 2 * l.forward.per_sample_ns});
    spec.layers.push_back(l);
  };
  add("stem", 2 * kF0, kA0, 4 * kA0, 3LL * 9 * 256 * 4);
  int k = 0;
  for (int g = 0; g < 3; ++g) {
    const int cells = normal_cells / 3 + (g < normal_cells % 3 ? 1 : 0);
    const double scale = 1 + 0.5 * g;
    for (int c = 0; c < cells; ++c, ++k) {
      add(fmt::format("normal{}", k), kF0 * scale * (1 + ((5 * k) % 7) / 6.0), kA0 >> g,
          (8 * kA0) >> g, kP0 << (2 * g));
    }
    if (g < 2) {
      add(fmt::format("reduction{}", g), 3 * kF0 * scale, kA0 >> (g + 1), (8 * kA0) >> g,
          2 * (kP0 << (2 * (g + 1))));
    }
  }
  add("head", 2.0 * 1000 * 1024, 4000, kA0 / 4, 1024LL * 1000 * 4);
  return spec;
}

ModelSpec uniform_model(int layers, Nanoseconds forward_ns, Nanoseconds backward_ns,
                        Bytes output_bytes, Bytes stash_bytes, Bytes param_bytes) {
  ModelSpec spec;
  spec.name = "uniform";
  spec.description = fmt::format("{} equal layers", layers);
  spec.input_bytes.per_sample_bytes = output_bytes;
  for (int i = 0; i < layers; ++i) {
    LayerSpec l = layer(fmt::format("layer{}", i), forward_ns, output_bytes, stash_bytes, param_bytes);
    l.set_backward(ScaledDuration{0, backward_ns});
    spec.layers.push_back(l);
  }
  return spec;
}

sched::Result<ModelSpec> model_preset(std::string_view name, const PresetOptions& o) {
  for (const Preset& p : presets()) {
    if (p.name != name) continue;
    const double flops = o.flops_per_s.value_or(kH100SustainedFlopsPerS);
    if (p.name == "uniform") {
      auto ok = check_options(name, o, {"layers", "forward_ns", "backward_ns", "output_bytes",
                                        "stash_bytes", "param_bytes"});
      if (!ok) return ok.error();
      return uniform_model(o.layers.value_or(8), o.forward_ns.value_or(1'000'000),
                           o.backward_ns.value_or(2'000'000), o.output_bytes.value_or(1 << 20),
                           o.stash_bytes.value_or(4 << 20), o.param_bytes.value_or(16 << 20));
    }
    if (p.name == "amoeba") {
      auto ok = check_options(name, o, {"layers", "flops_per_s"});
      if (!ok) return ok.error();
      if (auto rate = check_flop_rate(kAmoebaLargestFlops, flops); !rate) return rate.error();
      return amoeba_model(o.layers.value_or(18), flops);
    }
    auto ok = check_options(name, o, {"layers", "hidden", "heads", "sequence", "vocab", "flops_per_s", "attention", "gpu"});
    if (!ok) return ok.error();
    if (o.gpu && o.flops_per_s) return error("option 'gpu' excludes option 'flops_per_s': a GPU cost model times kernels itself");
    GptConfig config = *p.gpt;
    config.layers = o.layers.value_or(config.layers);
    config.hidden = o.hidden.value_or(config.hidden);
    config.heads = o.heads.value_or(config.heads);
    config.sequence = o.sequence.value_or(config.sequence);
    config.vocab = o.vocab.value_or(config.vocab);
    if (config.hidden % config.heads != 0) {
      return error(fmt::format("heads ({}) must divide hidden ({})", config.heads, config.hidden));
    }
    const AttentionActivations attention = o.attention.value_or(AttentionActivations::kStored);
    if (o.gpu) return gpt_model_on_gpu(std::string(name), config, *o.gpu, attention);
    if (auto rate = check_flop_rate(gpt_largest_flops(config), flops); !rate) return rate.error();
    return gpt_model(std::string(name), config, flops, attention);
  }
  std::string names;
  for (const Preset& p : presets()) names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
  return error(fmt::format("unknown model preset '{}' (available: {})", name, names));
}

sched::Result<ModelSpec> model_preset_on(std::string_view name, PresetOptions options, const ClusterSpec& cluster) {
  const bool gpt = name != "uniform" && name != "amoeba";
  if (gpt && !options.flops_per_s && !options.gpu && !cluster.devices.empty() && cluster.devices.front().gpu) {
    options.gpu = *cluster.devices.front().gpu;
  }
  if (options.gpu) return model_preset(name, options);  // a GPU cost model of its own or the cluster's
  const bool from_flops = name != "uniform";
  const bool from_cluster =
      from_flops && !options.flops_per_s && !cluster.devices.empty() && cluster.devices.front().flops_per_s > 0;
  if (!from_cluster) return model_preset(name, options);
  options.flops_per_s = cluster.devices.front().flops_per_s;
  auto model = model_preset(name, options);
  if (model) return model;
  std::string message = model.error().message;  // the rate is the cluster's, not an option given
  const std::string option = "option 'flops_per_s'";
  if (const auto at = message.find(option); at != std::string::npos) {
    message.replace(at, option.size(), fmt::format("cluster '{}''s device flops_per_s", cluster.name));
  }
  return error(std::move(message));
}

}  // namespace pipeworks::sim
