// A GPT layer's passes timed kernel by kernel on a GPU (gpu_kernels.h): the kernels Megatron-LM
// runs for a transformer block, the embedding and the LM head, for one micro-batch of b samples on
// one rank of a tensor-parallel group of t (bf16 activations, s sequence, h hidden, a heads,
// d = h / a, V vocabulary; bytes are what a kernel reads plus writes).
//
//   block, forward (F)                    input gradient (I)             weight gradient (W)
//   layer norm            4 bsh           layer norm bwd x2   6 bsh      per linear (in -> out):
//   QKV      GEMM  bs x 3h/t x h          per linear (in -> out):          GEMM in x out x bs
//   scores   GEMM  s x s x d, b a/t       GEMM bs x in x out               bias grad 2 bs out
//   softmax               4 b a s^2/t     bias-dropout-add bwd x2 5 bsh
//   dropout               5 b a s^2/t     GeLU bwd            24 bsh/t
//   context  GEMM  s x d x s, b a/t       core: GEMM s x s x d, 3 x GEMM s x d x s (b a/t each),
//   proj     GEMM  bs x h x h/t                 dropout bwd 5 b a s^2/t, softmax bwd 6 b a s^2/t
//   bias-dropout-add      7 bsh
//   layer norm            4 bsh
//   fc1      GEMM  bs x 4h/t x h
//   bias-GeLU             16 bsh/t
//   fc2      GEMM  bs x h x 4h/t
//   bias-dropout-add      7 bsh
//
// With a fused attention kernel (flash) the core is one kernel: 4 b s^2 h / t FLOPs forward, 10
// backward (five products: the scores re-computed, dV, dP, dQ, dK; Dao 2022). With selective
// recompute the core's forward kernels run again in I (Korthikanti et al. 2022 sec. 5).
//
//   embedding (vocabulary-parallel)   F: gather 4 bsh, add positions 6 bsh, dropout 5 bsh
//                                     W: dropout bwd 5 bsh, scatter-add 4 bsh, the dense
//                                        gradient of its V/t x h rows 4 V h / t
//   LM head                           F: layer norm 4 bsh, GEMM bs x V/t x h, cross-entropy over
//                                        the fp32 logits: cast 6, max 4, exp-sum 8, loss 4 bytes
//                                        per logit (b s V / t logits)
//                                     I: cross-entropy bwd 6 bytes per logit, GEMM bs x h x V/t,
//                                        layer norm bwd 6 bsh
//                                     W: GEMM h x V/t x bs
#pragma once

#include "sim/spec/gpu_kernels.h"
#include "sim/spec/model_presets.h"

namespace pipeworks::sim {

// One micro-batch's pass times in ns.
struct PassKernelNs {
  double forward = 0;
  double input_grad = 0;
  double weight_grad = 0;
};

// `tp` must divide the heads (Megatron's rule); `microbatch` >= 1.
PassKernelNs gpt_block_kernel_ns(const GptConfig& config, int microbatch, int tp, AttentionActivations attention,
                                 const GpuKernelModel& gpu);
PassKernelNs gpt_embedding_kernel_ns(const GptConfig& config, int microbatch, int tp, const GpuKernelModel& gpu);
PassKernelNs gpt_head_kernel_ns(const GptConfig& config, int microbatch, int tp, const GpuKernelModel& gpu);

}  // namespace pipeworks::sim
