// The kernel lists gpt_kernels.h draws, issued pass by pass into KernelStreams (gpu_kernels.h).
#include "sim/spec/gpt_kernels.h"

namespace pipeworks::sim {
namespace {

// One micro-batch's three passes as the host issues them.
struct PassStreams {
  explicit PassStreams(const GpuKernelModel& gpu)
      : forward(gpu.host_ns_per_kernel), input_grad(gpu.host_ns_per_kernel), weight_grad(gpu.host_ns_per_kernel) {}
  KernelStream forward;
  KernelStream input_grad;
  KernelStream weight_grad;
  PassKernelNs elapsed() const { return {forward.elapsed_ns(), input_grad.elapsed_ns(), weight_grad.elapsed_ns()}; }
};

// A linear layer's GEMMs: `rows` inputs of `in` features to `out`, forward and both gradients,
// with its bias gradient (a reduction over the output gradient) in W.
void add_linear(PassStreams& pass, const GpuKernelModel& gpu, std::int64_t rows, std::int64_t in, std::int64_t out) {
  pass.forward.run(gemm_ns(gpu, GemmShape{rows, out, in}));
  pass.input_grad.run(gemm_ns(gpu, GemmShape{rows, in, out}));
  pass.weight_grad.run(gemm_ns(gpu, GemmShape{in, out, rows}));
  pass.weight_grad.run(streaming_ns(gpu, 2.0 * static_cast<double>(rows * out)));
}

// The attention core's forward kernels (scores, softmax, dropout, context) into `stream`.
void run_core_forward(KernelStream& stream, const GpuKernelModel& gpu, std::int64_t s, std::int64_t d,
                      std::int64_t groups, double scores) {
  stream.run(gemm_ns(gpu, GemmShape{s, s, d, groups}));
  stream.run(streaming_ns(gpu, 4 * scores));
  stream.run(streaming_ns(gpu, 5 * scores));
  stream.run(gemm_ns(gpu, GemmShape{s, d, s, groups}));
}

// The attention core of `groups` = b a / t heads.
void add_attention_core(PassStreams& pass, const GpuKernelModel& gpu, const GptConfig& c, std::int64_t groups,
                        AttentionActivations attention) {
  const std::int64_t s = c.sequence;
  const std::int64_t d = c.hidden / c.heads;
  const auto scores = static_cast<double>(groups) * static_cast<double>(s) * static_cast<double>(s);
  if (attention == AttentionActivations::kFlash) {
    const double product_flops = 2 * scores * static_cast<double>(d);  // one s x s x d product
    pass.forward.run(flash_attention_ns(gpu, 2 * product_flops, false));
    pass.input_grad.run(flash_attention_ns(gpu, 5 * product_flops, true));
    return;
  }
  run_core_forward(pass.forward, gpu, s, d, groups, scores);
  if (attention == AttentionActivations::kSelectiveRecompute) run_core_forward(pass.input_grad, gpu, s, d, groups, scores);
  pass.input_grad.run(streaming_ns(gpu, 5 * scores));
  pass.input_grad.run(gemm_ns(gpu, GemmShape{s, s, d, groups}));
  for (int i = 0; i < 3; ++i) pass.input_grad.run(gemm_ns(gpu, GemmShape{s, d, s, groups}));
  pass.input_grad.run(streaming_ns(gpu, 6 * scores));
}

}  // namespace

PassKernelNs gpt_block_kernel_ns(const GptConfig& c, int microbatch, int tp, AttentionActivations attention,
                                 const GpuKernelModel& gpu) {
  const std::int64_t h = c.hidden;
  const std::int64_t rows = microbatch * c.sequence;
  const double bsh = static_cast<double>(rows) * static_cast<double>(h);
  PassStreams pass(gpu);
  pass.forward.run(streaming_ns(gpu, 4 * bsh));  // layer norm
  add_linear(pass, gpu, rows, h, 3 * h / tp);    // QKV
  add_attention_core(pass, gpu, c, microbatch * c.heads / tp, attention);
  add_linear(pass, gpu, rows, h / tp, h);  // attention output projection
  pass.forward.run(streaming_ns(gpu, 7 * bsh));  // bias-dropout-add
  pass.forward.run(streaming_ns(gpu, 4 * bsh));  // layer norm
  add_linear(pass, gpu, rows, h, 4 * h / tp);    // fc1
  pass.forward.run(streaming_ns(gpu, 16 * bsh / tp));  // bias-GeLU
  add_linear(pass, gpu, rows, 4 * h / tp, h);          // fc2
  pass.forward.run(streaming_ns(gpu, 7 * bsh));        // bias-dropout-add
  for (const double bytes : {5 * bsh, 24 * bsh / tp, 6 * bsh, 5 * bsh, 6 * bsh}) pass.input_grad.run(streaming_ns(gpu, bytes));
  return pass.elapsed();
}

PassKernelNs gpt_embedding_kernel_ns(const GptConfig& c, int microbatch, int tp, const GpuKernelModel& gpu) {
  const double bsh = static_cast<double>(microbatch) * static_cast<double>(c.sequence) * static_cast<double>(c.hidden);
  const double rows_bytes = 4.0 * static_cast<double>(c.vocab) * static_cast<double>(c.hidden) / tp;
  PassStreams pass(gpu);
  for (const double bytes : {4 * bsh, 6 * bsh, 5 * bsh}) pass.forward.run(streaming_ns(gpu, bytes));
  for (const double bytes : {5 * bsh, 4 * bsh, rows_bytes}) pass.weight_grad.run(streaming_ns(gpu, bytes));
  return pass.elapsed();
}

PassKernelNs gpt_head_kernel_ns(const GptConfig& c, int microbatch, int tp, const GpuKernelModel& gpu) {
  const std::int64_t rows = microbatch * c.sequence;
  const std::int64_t vocab = (c.vocab + tp - 1) / tp;  // Megatron pads the vocabulary to divide
  const double bsh = static_cast<double>(rows) * static_cast<double>(c.hidden);
  const double logits = static_cast<double>(rows) * static_cast<double>(vocab);
  PassStreams pass(gpu);
  pass.forward.run(streaming_ns(gpu, 4 * bsh));
  pass.forward.run(gemm_ns(gpu, GemmShape{rows, vocab, c.hidden}));
  for (const double bytes_per_logit : {6, 4, 8, 4}) pass.forward.run(streaming_ns(gpu, bytes_per_logit * logits));
  pass.input_grad.run(streaming_ns(gpu, 6 * logits));
  pass.input_grad.run(gemm_ns(gpu, GemmShape{rows, c.hidden, vocab}));
  pass.input_grad.run(streaming_ns(gpu, 6 * bsh));
  pass.weight_grad.run(gemm_ns(gpu, GemmShape{c.hidden, vocab, rows}));
  return pass.elapsed();
}

}  // namespace pipeworks::sim
