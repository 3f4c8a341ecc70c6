// Preset resizing flags (see preset_size_options.h).
#include "cli/preset_size_options.h"

#include <limits>
#include <utility>

#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/units.h"

namespace pipeworks::cli {
namespace {

constexpr const char* kGroup = "Preset size (model presets only; see pipeworks presets)";

// `text` parsed by `parse` into `out` unless empty; the error names `flag`.
template <typename T, typename Parse>
sched::Status parse_unless_empty(const std::string& text, const char* flag, Parse parse, std::optional<T>& out) {
  if (text.empty()) return sched::Ok{};
  auto value = parse(text);
  if (!value) return sched::Error{fmt::format("{}: {}", flag, value.error().message)};
  out = *value;
  return sched::Ok{};
}

// sim::PresetOptions' field names and the flags that set them.
constexpr std::pair<const char*, const char*> kFlagOfOption[] = {
    {"layers", "--layers"},          {"hidden", "--model-width"},          {"heads", "--heads"},
    {"sequence", "--seq-len"},       {"vocab", "--vocab"},                 {"flops_per_s", "--flops"},
    {"forward_ns", "--layer-forward"}, {"backward_ns", "--layer-backward"}, {"output_bytes", "--layer-output"},
    {"stash_bytes", "--layer-stash"}, {"param_bytes", "--layer-params"}, {"attention", "--attention"},
    {"gpu", "--gpu"}};

// sim's "option 'hidden' does not apply to model preset 'uniform'" as "--model-width does not ...".
std::string in_flag_words(std::string message) {
  for (const auto& [option, flag] : kFlagOfOption) {
    const std::string quoted = fmt::format("option '{}'", option);
    if (const auto at = message.find(quoted); at != std::string::npos) message.replace(at, quoted.size(), flag);
  }
  return message;
}

sched::Result<sim::PresetOptions> preset_options(const PresetSizeArgs& args) {
  sim::PresetOptions o;
  o.layers = args.layers;
  o.hidden = args.model_width;
  o.heads = args.heads;
  o.sequence = args.seq_len;
  o.vocab = args.vocab;
  o.flops_per_s = args.flops;
  if (auto s = parse_unless_empty(args.attention, "--attention", sim::parse_attention, o.attention); !s) return s.error();
  if (auto s = parse_unless_empty(args.gpu, "--gpu", sim::gpu_kernel_model_named_or_file, o.gpu); !s) return s.error();
  if (auto s = parse_unless_empty(args.layer_forward, "--layer-forward", sim::parse_duration, o.forward_ns); !s) return s.error();
  if (auto s = parse_unless_empty(args.layer_backward, "--layer-backward", sim::parse_duration, o.backward_ns); !s) {
    return s.error();
  }
  if (auto s = parse_unless_empty(args.layer_output, "--layer-output", sim::parse_bytes, o.output_bytes); !s) return s.error();
  if (auto s = parse_unless_empty(args.layer_stash, "--layer-stash", sim::parse_bytes, o.stash_bytes); !s) return s.error();
  if (auto s = parse_unless_empty(args.layer_params, "--layer-params", sim::parse_bytes, o.param_bytes); !s) return s.error();
  return o;
}

}  // namespace

bool PresetSizeArgs::any() const {
  return layers || model_width || heads || seq_len || vocab || flops || !attention.empty() || !gpu.empty() || !layer_forward.empty() ||
         !layer_backward.empty() || !layer_output.empty() || !layer_stash.empty() || !layer_params.empty();
}

void add_preset_size_options(CLI::App& command, PresetSizeArgs& args) {
  const auto count = [&command](const char* flag, auto& value, std::int64_t most, const char* help) {
    command.add_option(flag, value, help)->check(integer_from(1, most))->group(kGroup);
  };
  count("--layers", args.layers, sim::kMaxModelLayers, "uniform: layers; gpt*: transformer blocks; amoeba: normal cells");
  count("--model-width", args.model_width, sim::kMaxPresetHidden, "gpt*: hidden size h");
  count("--heads", args.heads, sim::kMaxPresetHidden, "gpt*: attention heads (dividing --model-width)");
  count("--seq-len", args.seq_len, sim::kMaxPresetSequence, "gpt*: sequence length s");
  count("--vocab", args.vocab, sim::kMaxPresetVocab, "gpt*: vocabulary size V");
  command.add_option("--flops", args.flops,
                     "gpt*, amoeba: sustained FLOP/s of a device, e.g. 4e14 (at least what keeps the preset's largest "
                     "layer within 1e15 ns per sample)")
      ->check(number_from(0, sim::kMaxPresetFlopsPerS, Ends::kAboveLow))
      ->group(kGroup);
  command.add_option("--attention", args.attention,
                     "gpt*: what a block keeps of its attention core for the backward: stored (default), "
                     "selective-recompute (re-computed, Korthikanti et al. 2022) or flash (a fused kernel's)")
      ->check(CLI::IsMember(std::vector<std::string>{"stored", "selective-recompute", "flash"}))
      ->group(kGroup);
  command.add_option("--gpu", args.gpu,
                     "gpt*: time every layer kernel by kernel on this GPU cost model: a100-sxm-80gb, h100-sxm, h200-sxm "
                     "or a data file's path (docs/gpu_cost_model.md); the DGX clusters name theirs; not with --flops")
      ->group(kGroup);
  command.add_option("--layer-forward", args.layer_forward, "uniform: forward time per sample per layer, e.g. 1ms")
      ->group(kGroup);
  command.add_option("--layer-backward", args.layer_backward, "uniform: backward time per sample per layer")
      ->group(kGroup);
  command.add_option("--layer-output", args.layer_output, "uniform: activation crossing a stage boundary per sample, e.g. 1MiB")
      ->group(kGroup);
  command.add_option("--layer-stash", args.layer_stash, "uniform: activations stashed per sample per layer")
      ->group(kGroup);
  command.add_option("--layer-params", args.layer_params, "uniform: parameter bytes per layer")->group(kGroup);
}

sched::Result<sim::ModelSpec> sized_model_preset(const std::string& name, const PresetSizeArgs& args,
                                                 const sim::ClusterSpec* cluster) {
  auto options = preset_options(args);
  if (!options) return options.error();
  auto model = cluster != nullptr ? sim::model_preset_on(name, *options, *cluster) : sim::model_preset(name, *options);
  if (!model) return sched::Error{in_flag_words(model.error().message)};
  return model;
}

}  // namespace pipeworks::cli
