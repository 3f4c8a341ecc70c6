// Built-in model specs computed from published formulas, so plans can be made without a
// profiler: `uniform` (equal layers), the GPT family (Megatron-LM FLOP and activation
// formulas) and `amoeba` (an AmoebaNet-like model with very uneven layers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/gpu_kernels.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {

// The ranges model_preset enforces on its options (the CLI's --help shows the same): byte
// counts stay within 64 bits, and every layer time within kMaxPresetLayerNs per sample.
inline constexpr std::int64_t kMaxPresetHidden = 1'000'000;
inline constexpr std::int64_t kMaxPresetSequence = 10'000'000;
inline constexpr std::int64_t kMaxPresetVocab = 100'000'000;
inline constexpr double kMaxPresetFlopsPerS = 1e21;
// The longest a preset layer may take per sample (about 11.6 days): a lower --flops than that
// allows is no device, and its times would overflow the simulator's clock.
inline constexpr double kMaxPresetLayerNs = 1e15;

// What a GPT block keeps of its attention core (the QK^T and softmax-times-V products) for the
// backward: everything (`stored`: s h (34 + 5 a s / h) bytes a block), nothing but its inputs,
// re-computing the core in the backward (`selective-recompute`, Korthikanti et al. 2022 sec. 5:
// 34 s h bytes, 4 s^2 h more FLOPs in I), or a fused kernel's (`flash`, Dao 2022: 34 s h + 4 a s
// bytes for the softmax statistics; its backward runs five products of the core where a stored
// one runs four, 2 s^2 h more FLOPs in I).
enum class AttentionActivations : std::uint8_t { kStored, kSelectiveRecompute, kFlash };
std::string_view attention_name(AttentionActivations attention);  // "stored", "selective-recompute", "flash"
sched::Result<AttentionActivations> parse_attention(std::string_view text);

// Overrides for a preset. Options that do not apply to the chosen preset are an error.
struct PresetOptions {
  std::optional<int> layers;                // uniform: layers; gpt*: blocks; amoeba: normal cells
  std::optional<std::int64_t> hidden;       // gpt*: h
  std::optional<std::int64_t> heads;        // gpt*: a (must divide h)
  std::optional<std::int64_t> sequence;     // gpt*: s
  std::optional<std::int64_t> vocab;        // gpt*: V
  std::optional<double> flops_per_s;        // gpt*, amoeba: sustained device FLOP/s
  std::optional<Nanoseconds> forward_ns;    // uniform: forward per sample per layer
  std::optional<Nanoseconds> backward_ns;   // uniform: backward per sample per layer
  std::optional<Bytes> output_bytes;        // uniform: boundary activation per sample
  std::optional<Bytes> stash_bytes;         // uniform: stash per sample per layer
  std::optional<Bytes> param_bytes;         // uniform: parameters per layer
  std::optional<AttentionActivations> attention;  // gpt*: the attention core's activations (default stored)
  // gpt*: time every layer kernel by kernel on this GPU (gpt_kernels.h) instead of FLOPs at one
  // rate; not with flops_per_s.
  std::optional<GpuKernelModel> gpu;
};

struct PresetInfo {
  std::string name;
  std::string description;  // one line, with the source of its formulas
};

// Every model preset, in a stable order.
std::vector<PresetInfo> model_presets();

// The preset `name` with `options` applied; errors name unknown presets and misused options.
// A preset costed from FLOPs (gpt*, amoeba) runs at options.flops_per_s, by default the DGX H100
// preset's sustained rate; a GPT given options.gpu is timed kernel by kernel on that GPU.
sched::Result<ModelSpec> model_preset(std::string_view name, const PresetOptions& options = {});

// The same preset for `cluster`: without a flops_per_s or gpu option, a GPT is timed kernel by
// kernel on the cluster's first device when that names its GPU cost model (DeviceSpec::gpu), and
// otherwise a preset costed from FLOPs runs at the sustained FLOP/s of that device when the
// cluster states one (its devices' relative speeds scale the rest): `--cluster dgx-a100` costs a
// GPT on A100s.
sched::Result<ModelSpec> model_preset_on(std::string_view name, PresetOptions options, const ClusterSpec& cluster);

// ---- The GPT family ------------------------------------------------------------------------
// Per transformer block, per sample (s sequence, h hidden, a heads), Narayanan et al. 2021
// "Efficient Large-Scale Language Model Training on GPU Clusters" (Megatron-LM), sec. 5.1:
//   forward FLOPs          24 s h^2 + 4 s^2 h
//   backward FLOPs         2x forward, split I = 24 s h^2 + 8 s^2 h, W = 24 s h^2
//                          (the attention score/value products have no weights)
//   parameters             12 h^2 + 13 h, stored bf16 (2 bytes)
//   stash (bytes)          s h (34 + 5 a s / h)  (Korthikanti et al. 2022, "Reducing Activation
//                          Recomputation in Large Transformer Models", eq. 1, no parallelism)
//   output (bytes)         2 s h (the bf16 hidden state crossing a stage boundary)
// First layer "embedding": (V + s) h parameters (token + learned position tables), no FLOPs,
//   stash 8 s (int64 token ids for the gradient scatter), output 2 s h. Model input 8 s bytes.
// Last layer "lm_head": final layer norm + logits, forward 2 s h V FLOPs, backward 2x split
//   evenly, parameters V h + 2 h (its own copy of the tied embedding, as Megatron keeps on the
//   last stage), stash 2 s h + 4 s V (input + fp32 logits for the loss), output 2 s V (logits).
// Time = FLOPs / flops_per_s, rounded to the nanosecond; or, given a GPU cost model, each pass's
// kernels timed by gpt_kernels.h at micro-batch sizes 1, 2, 4 .. kGptKernelSizes (a table; larger
// sizes go on at the last two sizes' slope), and for every tensor-parallel size t = 2, 4, .. 64
// dividing the heads a rank's own table (TensorParallelSplit::rank_times): a GEMM narrowed by t
// keeps less of the GPU busy, so a rank rarely takes 1/t of the whole.
// Tensor parallelism (Megatron-LM; tensor_parallel.h divides the rest by t):
//   embedding   vocabulary-parallel: one all-reduce of the 2 s h output forward; the position
//               table (2 s h bytes) and the token ids (the whole stash) on every rank
//   block       column- then row-parallel attention and MLP: two all-reduces of 2 s h forward
//               and two in the input-gradient backward (Shoeybi et al. 2019, fig. 4); 10 s h of
//               the stash on every rank without sequence parallelism (Korthikanti et al. 2022
//               eq. 2: s h (10 + 24/t + 5 a s / h t)); layer norms and the output biases (6 h
//               parameters) on every rank
//   lm_head     vocabulary-parallel logits and loss: one all-reduce of the input gradient
//               (2 s h) backward; the input (2 s h of the stash) and the final norm on every rank
struct GptConfig {
  int layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t sequence = 1024;
  std::int64_t vocab = 50257;
};

inline constexpr GptConfig kGpt2Small{12, 768, 12, 1024, 50257};    // GPT-2 124M
inline constexpr GptConfig kGpt2Medium{24, 1024, 16, 1024, 50257};  // GPT-2 350M
inline constexpr GptConfig kGpt3Xl{24, 2048, 16, 2048, 50257};      // GPT-3 XL 1.3B (Brown et al. 2020, table 2.1)
inline constexpr GptConfig kGpt3_175b{96, 12288, 96, 2048, 50257};  // GPT-3 175B (same table)

// Parameters of the model as trained (embedding tied with the LM head, counted once):
// (V + s) h + L (12 h^2 + 13 h) + 2 h.
std::int64_t gpt_parameter_count(const GptConfig& config);

inline constexpr int kGptKernelSizes = 1024;
ModelSpec gpt_model(std::string name, const GptConfig& config, double flops_per_s,
                    AttentionActivations attention = AttentionActivations::kStored);
// An error when a pass would take longer than kMaxPresetLayerNs per sample.
sched::Result<ModelSpec> gpt_model_on_gpu(std::string name, const GptConfig& config, const GpuKernelModel& gpu,
                                          AttentionActivations attention = AttentionActivations::kStored);

// ---- AmoebaNet-like ------------------------------------------------------------------------
// An illustrative (not measured) image model with strongly uneven layers, for partitioning
// studies. N normal cells in 3 groups (sizes as equal as possible, earlier groups larger),
// a reduction cell after groups 0 and 1, a stem before and a classifier head after; N + 4
// layers in all. With F0 = 1 GFLOP, A0 = 56*56*256*4 bytes, P0 = 9*256^2*4 bytes, group g:
//   normal cell k (k-th normal cell overall): forward F0 (1 + g/2) (1 + ((5k) mod 7) / 6)
//       FLOPs, output A0 / 2^g, stash 8 A0 / 2^g, params P0 4^g
//   reduction cell after group g: forward 3 F0 (1 + g/2), output A0 / 2^(g+1),
//       stash 8 A0 / 2^g, params 2 P0 4^(g+1)
//   stem: forward 2 F0, output A0, stash 4 A0, params 3*9*256*4; model input 224*224*3*4
//   head: forward 2*1000*1024 FLOPs, output 4000, stash A0 / 4, params 1024*1000*4
// Backward is 2x forward (split evenly); fp32 parameters. Time = FLOPs / flops_per_s.
ModelSpec amoeba_model(int normal_cells, double flops_per_s);

// Uniform: `layers` identical layers with the given per-sample costs (backward split evenly).
ModelSpec uniform_model(int layers, Nanoseconds forward_ns, Nanoseconds backward_ns,
                        Bytes output_bytes, Bytes stash_bytes, Bytes param_bytes);

}  // namespace pipeworks::sim
