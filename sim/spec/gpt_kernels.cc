// The kernel lists gpt_kernels.h draws, summed per pass.
#include "sim/spec/gpt_kernels.h"

namespace pipeworks::sim {
namespace {

// A linear layer's GEMMs: `rows` inputs of `in` features to `out`, forward and both gradients,
// with its bias gradient (a reduction over the output gradient) in W.
void add_linear(PassKernelNs& pass, const GpuKernelModel& gpu, std::int64_t rows, std::int64_t in, std::int64_t out) {
  pass.forward += gemm_ns(gpu, GemmShape{rows, out, in});
  pass.input_grad += gemm_ns(gpu, GemmShape{rows, in, out});
  pass.weight_grad += gemm_ns(gpu, GemmShape{in, out, rows});
  pass.weight_grad += streaming_ns(gpu, 2.0 * static_cast<double>(rows * out));
}

// The attention core (scores, softmax, dropout, context) of `groups` = b a / t heads.
void add_attention_core(PassKernelNs& pass, const GpuKernelModel& gpu, const GptConfig& c, std::int64_t groups,
                        AttentionActivations attention) {
  const std::int64_t s = c.sequence;
  const std::int64_t d = c.hidden / c.heads;
  const auto scores = static_cast<double>(groups) * static_cast<double>(s) * static_cast<double>(s);
  if (attention == AttentionActivations::kFlash) {
    const double product_flops = 2 * scores * static_cast<double>(d);  // one s x s x d product
    pass.forward += flash_attention_ns(gpu, 2 * product_flops, false);
    pass.input_grad += flash_attention_ns(gpu, 5 * product_flops, true);
    return;
  }
  const double forward = gemm_ns(gpu, GemmShape{s, s, d, groups}) + streaming_ns(gpu, 4 * scores) +
                         streaming_ns(gpu, 5 * scores) + gemm_ns(gpu, GemmShape{s, d, s, groups});
  pass.forward += forward;
  pass.input_grad += gemm_ns(gpu, GemmShape{s, s, d, groups}) + 3 * gemm_ns(gpu, GemmShape{s, d, s, groups}) +
                     streaming_ns(gpu, 5 * scores) + streaming_ns(gpu, 6 * scores);
  if (attention == AttentionActivations::kSelectiveRecompute) pass.input_grad += forward;
}

}  // namespace

PassKernelNs gpt_block_kernel_ns(const GptConfig& c, int microbatch, int tp, AttentionActivations attention,
                                 const GpuKernelModel& gpu) {
  const std::int64_t h = c.hidden;
  const std::int64_t rows = microbatch * c.sequence;
  const double bsh = static_cast<double>(rows) * static_cast<double>(h);
  PassKernelNs pass;
  add_linear(pass, gpu, rows, h, 3 * h / tp);  // QKV
  add_linear(pass, gpu, rows, h / tp, h);      // attention output projection
  add_linear(pass, gpu, rows, h, 4 * h / tp);  // fc1
  add_linear(pass, gpu, rows, 4 * h / tp, h);  // fc2
  add_attention_core(pass, gpu, c, microbatch * c.heads / tp, attention);
  pass.forward += 2 * streaming_ns(gpu, 4 * bsh) + 2 * streaming_ns(gpu, 7 * bsh) + streaming_ns(gpu, 16 * bsh / tp);
  pass.input_grad += 2 * streaming_ns(gpu, 6 * bsh) + 2 * streaming_ns(gpu, 5 * bsh) + streaming_ns(gpu, 24 * bsh / tp);
  return pass;
}

PassKernelNs gpt_embedding_kernel_ns(const GptConfig& c, int microbatch, int tp, const GpuKernelModel& gpu) {
  const double bsh = static_cast<double>(microbatch) * static_cast<double>(c.sequence) * static_cast<double>(c.hidden);
  const double rows_bytes = 4.0 * static_cast<double>(c.vocab) * static_cast<double>(c.hidden) / tp;
  PassKernelNs pass;
  pass.forward = streaming_ns(gpu, 4 * bsh) + streaming_ns(gpu, 6 * bsh) + streaming_ns(gpu, 5 * bsh);
  pass.weight_grad = streaming_ns(gpu, 5 * bsh) + streaming_ns(gpu, 4 * bsh) + streaming_ns(gpu, rows_bytes);
  return pass;
}

PassKernelNs gpt_head_kernel_ns(const GptConfig& c, int microbatch, int tp, const GpuKernelModel& gpu) {
  const std::int64_t rows = microbatch * c.sequence;
  const std::int64_t vocab = (c.vocab + tp - 1) / tp;  // Megatron pads the vocabulary to divide
  const double bsh = static_cast<double>(rows) * static_cast<double>(c.hidden);
  const double logits = static_cast<double>(rows) * static_cast<double>(vocab);
  PassKernelNs pass;
  pass.forward = streaming_ns(gpu, 4 * bsh) + gemm_ns(gpu, GemmShape{rows, vocab, c.hidden}) +
                 streaming_ns(gpu, 6 * logits) + streaming_ns(gpu, 4 * logits) + streaming_ns(gpu, 8 * logits) +
                 streaming_ns(gpu, 4 * logits);
  pass.input_grad = streaming_ns(gpu, 6 * logits) + gemm_ns(gpu, GemmShape{rows, c.hidden, vocab}) +
                    streaming_ns(gpu, 6 * bsh);
  pass.weight_grad = gemm_ns(gpu, GemmShape{c.hidden, vocab, rows});
  return pass;
}

}  // namespace pipeworks::sim
