// Whole-model pass timing of the profiler (see pass_timing.h).
#include "hw/predict/pass_timing.h"

#include <algorithm>
#include <functional>

#include <torch/torch.h>

#include "hw/exec/stage_compute.h"

namespace pipeworks::hw {
namespace {

using Member = std::vector<std::vector<std::int64_t>> PassTimes::*;

// One pass's spans on the device's clock: marked while the pass runs, turned into timings once
// the clock has resolved every mark (after the pass; on a GPU one synchronize).
class PassMarks {
 public:
  explicit PassMarks(ActionClock& clock) : clock_(clock) { clock_.start_step(std::chrono::steady_clock::now()); }
  ClockMark mark() { return clock_.mark(); }
  // A span from `begin` to now; `counts` false keeps a 0 instead (nothing was computed).
  void keep(Member what, std::size_t layer, ClockMark begin, bool counts = true) {
    spans_.push_back({what, layer, begin, clock_.mark(), counts});
  }
  // Resolves the marks; with `into`, appends each span's nanoseconds to its layer's timings.
  sched::Status resolve(PassTimes* into) {
    if (auto status = clock_.finish_step(); !status) return status.error();
    if (into == nullptr) return sched::Ok{};
    for (const Span& s : spans_) {
      ((*into).*s.what)[s.layer].push_back(s.counts ? std::max<std::int64_t>(0, clock_.ns(s.end) - clock_.ns(s.begin)) : 0);
    }
    return sched::Ok{};
  }

 private:
  struct Span {
    Member what;
    std::size_t layer;
    ClockMark begin, end;
    bool counts;
  };
  ActionClock& clock_;
  std::vector<Span> spans_;
};

// The split backward of one pass, as the executor runs a zero-bubble stage (stage_compute.h): a
// fresh forward (untimed) builds the graph, then per layer from the last, I (the input's
// gradient, graph kept, the gradients into the operations that use parameters captured) and W
// (those operations again, for their parameters only).
//
//   B:      loss -> [layer L-1] -> ... -> [layer 0]          one walk, both gradients
//   I, W:   loss -> I[L-1] -> I[L-2] -> ... ;  W[l] runs layer l's parameter operations
void time_split_backward(Model& model, const Batch& batch, PassMarks& marks) {
  const std::size_t n = model.layers.size();
  std::vector<Slot> slots(n);
  torch::Tensor x = batch.inputs;
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    slots[l].input = fresh_input(x, l == 0);
    slots[l].output = run.forward(slots[l].input);
    x = slots[l].output.detach();
  }
  torch::Tensor grad = torch::ones_like(slots[n - 1].output);
  for (std::size_t l = n; l-- > 0;) {
    const std::vector<torch::Tensor> params = trainable_parameters(model.layers[l]);
    ClockMark t0 = marks.mark();
    backward_input(slots[l], grad, params);
    // Nothing to compute for the model's input (the cost model gives the first stage no I).
    marks.keep(&PassTimes::backward_input, l, t0, slots[l].input.requires_grad());
    // An output that does not depend on its input passes a zero gradient on.
    grad = slots[l].input_grad.defined() || l == 0 ? slots[l].input_grad : torch::zeros_like(slots[l].input);
    t0 = marks.mark();
    backward_weight(slots[l]);
    marks.keep(&PassTimes::backward_weight, l, t0, !params.empty());
  }
}

sched::Status time_pass(Model& model, const Batch& batch, ActionClock& clock, PassTimes* into) {
  const std::size_t n = model.layers.size();
  std::vector<torch::Tensor> inputs(n), outputs(n);
  torch::Tensor x = batch.inputs;
  PassMarks marks(clock);
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    inputs[l] = fresh_input(x, l == 0);
    const ClockMark t0 = marks.mark();
    outputs[l] = run.forward(inputs[l]);
    marks.keep(&PassTimes::forward, l, t0);
    x = outputs[l].detach();
  }
  for (std::size_t l = n; l-- > 0;) {
    const torch::Tensor grad = l + 1 == n ? torch::ones_like(outputs[l]) : inputs[l + 1].grad();
    const ClockMark t0 = marks.mark();
    torch::autograd::backward({outputs[l]}, {grad});
    marks.keep(&PassTimes::backward, l, t0);
  }
  time_split_backward(model, batch, marks);
  const torch::NoGradGuard no_grad;
  x = batch.inputs;
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    const ClockMark t0 = marks.mark();
    x = run.forward(x);
    marks.keep(&PassTimes::forward_no_grad, l, t0);
  }
  return marks.resolve(into);
}

}  // namespace

torch::Tensor LayerRun::forward(const torch::Tensor& input) const {
  torch::Tensor out = layer.module.forward(input);
  if (is_last) {
    out = compute_loss(loss, out, target);
    (void)out.item<double>();
  }
  return out;
}

torch::Tensor fresh_input(const torch::Tensor& x, bool is_data) {
  return x.is_floating_point() && !is_data ? x.detach().requires_grad_(true) : x;
}

std::vector<torch::Tensor> trainable_parameters(Layer& layer) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : layer.module.ptr()->parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

sched::Result<std::vector<PassTimes>> time_sizes_in_turns(Model& model, const std::vector<Batch>& batches, int warmup,
                                                          int repetitions, ActionClock& clock) {
  std::vector<PassTimes> times(batches.size(), PassTimes(model.layers.size()));
  for (int r = 0; r < warmup + repetitions; ++r) {
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (auto status = time_pass(model, batches[i], clock, r >= warmup ? &times[i] : nullptr); !status) {
        return sched::Error{"layer timing: " + status.error().message};
      }
    }
  }
  return times;
}

Timing median_of_rounds(const std::vector<std::vector<PassTimes>>& rounds, std::size_t i,
                        std::vector<std::vector<std::int64_t>> PassTimes::*what, std::size_t layer) {
  std::vector<std::int64_t> medians;
  std::vector<std::int64_t> all;
  for (const std::vector<PassTimes>& round : rounds) {
    const std::vector<std::int64_t>& samples = (round[i].*what)[layer];
    medians.push_back(summarize_timings(samples).median_ns);
    all.insert(all.end(), samples.begin(), samples.end());
  }
  Timing out = summarize_timings(all);
  std::sort(medians.begin(), medians.end());
  out.median_ns = medians[(medians.size() - 1) / 2];
  return out;
}

}  // namespace pipeworks::hw
