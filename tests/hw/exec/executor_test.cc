// The executor against the non-pipelined reference: gradients and parameters, measured
// timelines and activation memory.
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include "hw/exec/counting_allocator.h"
#include "hw/exec/stage_compute.h"
#include "hw/exec/threads.h"

namespace pipeworks::hw {
namespace {

using sched::ScheduleKind;
using namespace testing;

// Runs `steps` pipelined steps and as many reference steps on the same micro-batches; returns
// the comparison of gradients (each step) and of the final parameters.
struct Comparison {
  TensorDiff grads;
  TensorDiff params;
};

Comparison compare_run(const ModelConfig& config, const sched::Schedule& schedule, ReferenceMode mode, int steps,
                       OptimizerConfig optimizer = {}) {
  set_worker_threads(1);
  const Model model = build_model(config).value();
  Reference reference(model, optimizer);
  auto executor = make_executor(model, schedule, one_thread(optimizer));
  Comparison out;
  out.grads.exactly_equal = true;
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t seed = 100 + static_cast<std::uint64_t>(step);
    const int m = schedule.num_microbatches;
    const MicroBatches batch = split_batch(make_batch(config, 2 * m, seed), m).value();
    auto result = executor->step(batch, seed);
    if (!result) FAIL(result.error().message);
    REQUIRE(reference.step(batch, seed, mode).ok());
    const TensorDiff d = compare_tensors(grads_of(cell_parameters(executor->cells())), reference.gradients());
    out.grads.exactly_equal = out.grads.exactly_equal && d.exactly_equal;
    out.grads.all_close = out.grads.all_close && d.all_close;
    out.grads.max_abs_diff = std::max(out.grads.max_abs_diff, d.max_abs_diff);
  }
  out.params = compare_tensors(cell_parameters(executor->cells()), reference.parameters());
  return out;
}

TEST_CASE("cells own deep copies of the model's parameters") {
  const Model model = build_model(tiny_mlp()).value();
  auto cells = make_cells(model, sim::uniform_partition(5, 2).value(), {0, 1}).value();
  const auto model_params = model.layers[0].module.ptr()->parameters();
  const auto cell_params = cells[0].parameters();
  REQUIRE(cell_params.size() == 2 * 3);  // layers 0..2, weight and bias each
  CHECK(torch::equal(cell_params[0], model_params[0]));
  CHECK(cell_params[0].data_ptr() != model_params[0].data_ptr());
  {
    torch::NoGradGuard no_grad;
    cell_params[0].add_(1.0);
  }
  CHECK_FALSE(torch::equal(cell_params[0], model_params[0]));
  CHECK(cells[0].first_layer == 0);
  CHECK(cells[0].end_layer == 3);
  CHECK(cells[1].is_last);
}

TEST_CASE("pipelined mlp gradients are bit-identical to the micro-batch reference") {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (bool recompute : {false, true}) {
      for (int k = 1; k <= 4; ++k) {
        for (int m = 1; m <= 8; ++m) {
          CAPTURE(sched::schedule_kind_name(kind), recompute, k, m);
          const Comparison c = compare_run(tiny_mlp(recompute ? 0.25 : 0.0), lowered(kind, k, m, recompute),
                                           ReferenceMode::kMicrobatches, 1);
          CHECK(c.grads.exactly_equal);
          CHECK(c.params.exactly_equal);
        }
      }
    }
  }
}

TEST_CASE("pipelined transformer gradients are bit-identical to the micro-batch reference, dropout on") {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (bool recompute : {false, true}) {
      for (int k = 1; k <= 4; ++k) {
        for (int m : {1, 2, 3, 5}) {
          CAPTURE(sched::schedule_kind_name(kind), recompute, k, m);
          const Comparison c =
              compare_run(tiny_transformer(0.2), lowered(kind, k, m, recompute), ReferenceMode::kMicrobatches, 1);
          CHECK(c.grads.exactly_equal);
        }
      }
    }
  }
}

TEST_CASE("pipelined gradients match one full-batch pass within rtol 1e-5 / atol 4e-5") {
  for (const ModelConfig& config : {tiny_mlp(), tiny_transformer()}) {
    for (int k : {2, 4}) {
      for (int m : {1, 3, 8}) {
        CAPTURE(model_kind_name(config.kind), k, m);
        const Comparison c =
            compare_run(config, lowered(ScheduleKind::kOneFOneB, k, m, true), ReferenceMode::kFullBatch, 1);
        CHECK(c.grads.all_close);
        CHECK(c.grads.max_abs_diff < 4e-5);
      }
    }
  }
}

TEST_CASE("parameters after several optimizer steps match the reference exactly (SGD, momentum, Adam)") {
  for (sim::OptimizerKind opt : {sim::OptimizerKind::kSgd, sim::OptimizerKind::kMomentum, sim::OptimizerKind::kAdam}) {
    for (const ModelConfig& config : {tiny_mlp(0.1), tiny_transformer(0.1)}) {
      CAPTURE(sim::optimizer_name(opt), model_kind_name(config.kind));
      const Comparison c = compare_run(config, lowered(ScheduleKind::kGPipe, 3, 4, true),
                                       ReferenceMode::kMicrobatches, 3, OptimizerConfig{opt, 0.05, 0.9});
      CHECK(c.grads.exactly_equal);
      CHECK(c.params.exactly_equal);
    }
  }
}

TEST_CASE("stages sharing a device hand data over in memory and still match exactly") {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    const sched::Schedule schedule = lowered(kind, 4, 4, false, {0, 0, 1, 1});
    const Comparison c = compare_run(tiny_mlp(), schedule, ReferenceMode::kMicrobatches, 2);
    CHECK(c.grads.exactly_equal);
    CHECK(c.params.exactly_equal);
  }
}

TEST_CASE("the measured timeline has one span per action, a flow per transfer, and memory samples") {
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 3, 4, false);
  const Model model = build_model(tiny_mlp()).value();
  auto executor = make_executor(model, schedule, one_thread());
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 7), 4).value();
  auto result = executor->step(batch, 7).value();
  const sched::Timeline& t = result.timeline;
  CHECK(t.name == "measured");
  CHECK(t.num_devices == 3);
  CHECK(t.spans.size() == schedule.num_actions());
  // 2 boundaries x 4 micro-batches x (activation + gradient).
  CHECK(t.flows.size() == 16);
  std::size_t compute = 0;
  for (const sched::Span& s : t.spans) {
    CHECK(s.start_ns <= s.end_ns);
    CHECK(s.lane == (sched::is_send(s.action.kind)   ? sched::Lane::kSend
                     : sched::is_recv(s.action.kind) ? sched::Lane::kRecv
                                                     : sched::Lane::kCompute));
    if (sched::is_compute(s.action.kind)) ++compute;
  }
  CHECK(compute == 3 * 4 * 2);
  CHECK(t.memory.size() == compute);
  for (const sched::Flow& f : t.flows) {
    CHECK(t.spans[f.send_span].action.microbatch == t.spans[f.recv_span].action.microbatch);
    CHECK(t.spans[f.send_span].start_ns <= t.spans[f.recv_span].end_ns);
  }
  CHECK(result.loss > 0);
  CHECK(result.step_ns >= sched::compute_stats(t).makespan_ns);
}

// Peak activation bytes of device 0 for a mid-sized mlp.
sched::Bytes device0_peak(ScheduleKind kind, bool recompute) {
  ModelConfig config = tiny_mlp();
  config.width = 64;
  const Model model = build_model(config).value();
  const sched::Schedule schedule = lowered(kind, 4, 8, recompute);
  auto executor = make_executor(model, schedule, one_thread());
  const MicroBatches batch = split_batch(make_batch(config, 8 * 16, 3), 8).value();
  return executor->step(batch, 3).value().peak_activation_bytes.at(0);
}

TEST_CASE("activation memory is counted at the allocator: 1F1B and recompute hold less than GPipe") {
  const sched::Bytes gpipe = device0_peak(ScheduleKind::kGPipe, false);
  const sched::Bytes one_f_one_b = device0_peak(ScheduleKind::kOneFOneB, false);
  const sched::Bytes gpipe_recompute = device0_peak(ScheduleKind::kGPipe, true);
  CHECK(counting_allocator_installed());
  // Device 0's stage (layers 0-1, 16 samples x 64 floats per activation) keeps at least its
  // two layer outputs for each of the 8 micro-batches under GPipe.
  CHECK(gpipe >= 8 * 2 * 16 * 64 * 4);
  CHECK(one_f_one_b < gpipe);
  CHECK(gpipe_recompute < gpipe);
}

TEST_CASE("threads per worker split the cores without oversubscription") {
  CHECK(default_threads_per_worker(1) >= 1);
  CHECK(default_threads_per_worker(1000) == 1);
  CHECK(resolve_threads_per_worker(3, 4) == 3);
  CHECK(resolve_threads_per_worker(0, 1000) == 1);
}

}  // namespace
}  // namespace pipeworks::hw

namespace pipeworks::hw {
namespace {

// True when every stage ends its micro-batches' backwards (B, or W after I) in micro-batch order,
// so parameter gradients are summed in the reference's order.
bool accumulates_in_order(const sched::Schedule& schedule) {
  std::vector<int> last(static_cast<std::size_t>(schedule.num_stages), -1);
  for (const auto& program : schedule.programs) {
    for (const sched::Action& a : program) {
      if (a.kind != sched::ActionKind::kBackward && a.kind != sched::ActionKind::kBackwardWeight) continue;
      int& previous = last[static_cast<std::size_t>(a.stage)];
      if (a.microbatch < previous) return false;
      previous = a.microbatch;
    }
  }
  return true;
}

// Two steps of `schedule` against the micro-batch reference: within rtol 1e-5 / atol 4e-5, and
// bit-identical where the accumulation order is the reference's.
void check_against_reference(const ModelConfig& config, const sched::Schedule& schedule) {
  const Comparison c = compare_run(config, schedule, ReferenceMode::kMicrobatches, 2);
  CHECK(c.grads.all_close);
  CHECK(c.grads.max_abs_diff < 4e-5);
  CHECK(c.params.all_close);
  if (accumulates_in_order(schedule)) {
    CHECK(c.grads.exactly_equal);
    CHECK(c.params.exactly_equal);
  }
}

}  // namespace

TEST_CASE("split backward (I then W): zero-bubble schedules match the micro-batch reference") {
  const ScheduleKind kinds[] = {ScheduleKind::kZbH1, ScheduleKind::kZbH2, ScheduleKind::kZbV,
                                ScheduleKind::kDualPipeV};
  for (const ModelConfig& config : {tiny_mlp(), tiny_transformer(0.2)}) {
    for (const ScheduleKind kind : kinds) {
      for (const bool recompute : {false, true}) {
        for (int p = 1; p <= 2; ++p) {
          for (const int m : {1, 2, 5}) {
            const int k = sched::is_v_shaped(kind) ? 2 * p : p;
            CAPTURE(model_kind_name(config.kind), sched::schedule_kind_name(kind), recompute, k, m);
            const sched::Schedule schedule = lowered(kind, k, m, recompute);
            check_against_reference(config, schedule);
          }
        }
      }
    }
  }
}

TEST_CASE("virtual stages: interleaved 1F1B and looped BFS match the micro-batch reference") {
  for (const ModelConfig& config : {tiny_mlp(), tiny_transformer(0.2)}) {
    for (const ScheduleKind kind : {ScheduleKind::kInterleaved1F1B, ScheduleKind::kLoopedBfs}) {
      for (const bool recompute : {false, true}) {
        // (p, v) with p x v stages within the tiny models' 5 and 6 layers.
        for (const auto& [p, v] : {std::pair{1, 2}, std::pair{2, 2}, std::pair{1, 3}, std::pair{1, 5}}) {
          for (const int m : {2, 4, 6}) {
            CAPTURE(model_kind_name(config.kind), sched::schedule_kind_name(kind), recompute, p, v, m);
            const sched::Schedule schedule = lowered_virtual(kind, p * v, m, v, recompute);
            REQUIRE(schedule.num_devices() == p);
            check_against_reference(config, schedule);
          }
        }
      }
    }
  }
}

TEST_CASE("split backward: I then W gives a cell the very gradients one B gives") {
  for (const ModelConfig& config : {tiny_mlp(), tiny_transformer()}) {
    CAPTURE(model_kind_name(config.kind));
    const Model model = build_model(config).value();
    const auto partition = sim::uniform_partition(static_cast<int>(model.layers.size()), 2).value();
    auto whole = make_cells(model, partition, {0, 1}).value();
    auto split = make_cells(model, partition, {0, 1}).value();
    const MicroBatches batch = split_batch(make_batch(config, 4, 7), 1).value();
    // Stage 1 of 2: its input is stage 0's output, detached, as the executor hands it over.
    const torch::Tensor hidden = whole[0].forward(batch.inputs[0]).detach();
    const torch::Tensor grad = torch::randn(whole[1].forward(hidden).sizes());

    Slot b;
    b.input = hidden.clone().requires_grad_(true);
    b.output = whole[1].forward(b.input);
    torch::autograd::backward({b.output}, {grad});

    Slot s;
    s.input = hidden.clone().requires_grad_(true);
    s.output = split[1].forward(s.input);
    backward_input(s, grad, split[1].parameters());
    for (const torch::Tensor& p : split[1].parameters()) CHECK_FALSE(p.grad().defined());  // I leaves them
    CHECK(torch::equal(s.input_grad, b.input.grad()));
    CHECK(pending_weight_bytes(s) > 0);
    backward_weight(s);
    CHECK_FALSE(s.output.defined());
    CHECK_FALSE(s.pending);
    CHECK(compare_tensors(grads_of(split[1].parameters()), grads_of(whole[1].parameters())).exactly_equal);
  }
}

// x -> linear(8 -> 16) -> h = relu -> linear(16 -> 3) -> out, batch 4.
struct TwoLinears {
  torch::nn::Linear first{8, 16};
  torch::nn::Linear second{16, 3};
  std::vector<torch::Tensor> params() const { return {first->weight, first->bias, second->weight, second->bias}; }
  // One B's parameter gradients from `grad`, the parameters' .grad left empty.
  std::vector<torch::Tensor> reference_grads(const torch::Tensor& x, const torch::Tensor& grad) {
    torch::autograd::backward({second(torch::relu(first(x)))}, {grad});
    std::vector<torch::Tensor> out = grads_of(params());
    for (const torch::Tensor& p : params()) p.mutable_grad() = torch::Tensor();
    return out;
  }
};

TEST_CASE("split backward at operator granularity: W runs only the operations that use parameters") {
  torch::manual_seed(3);
  TwoLinears net;
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor grad = torch::randn({4, 3});
  const std::vector<torch::Tensor> reference = net.reference_grads(x.clone().requires_grad_(true), grad);

  Slot s;
  s.input = x.clone().requires_grad_(true);
  int activation_walks = 0;  // times the gradient of h was computed
  torch::Tensor h = torch::relu(net.first(s.input));
  h.register_hook([&](torch::Tensor g) {
    ++activation_walks;
    return g;
  });
  s.output = net.second(h);
  backward_input(s, grad, net.params());
  CHECK(activation_walks == 1);
  // I leaves the gradients flowing into the two addmm: 4 x 3 (the output's, captured as it is)
  // and 4 x 16 floats.
  CHECK(pending_weight_bytes(s) == (4 * 3 + 4 * 16) * 4);
  backward_weight(s);
  CHECK(activation_walks == 1);  // W did not walk back through h
  CHECK(compare_tensors(grads_of(net.params()), reference).exactly_equal);
}

TEST_CASE("split backward: on the first stage W runs the whole backward, and tied weights fall back to a whole W") {
  torch::manual_seed(4);
  TwoLinears net;
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor grad = torch::randn({4, 3});
  const std::vector<torch::Tensor> reference = net.reference_grads(x, grad);

  Slot first;  // the data needs no gradient: nothing for I to do
  first.input = x;
  first.output = net.second(torch::relu(net.first(first.input)));
  backward_input(first, grad, net.params());
  CHECK_FALSE(first.input_grad.defined());
  CHECK(pending_weight_bytes(first) == 4 * 3 * 4);  // the output's gradient, for W
  backward_weight(first);
  CHECK(compare_tensors(grads_of(net.params()), reference).exactly_equal);

  // One 8 x 8 weight used twice: out = (x w) w.
  const torch::Tensor w = torch::randn({8, 8}).requires_grad_(true);
  const torch::Tensor g8 = torch::randn({4, 8});
  const torch::Tensor xr = x.clone().requires_grad_(true);
  torch::autograd::backward({xr.mm(w).mm(w)}, {g8});
  const torch::Tensor w_grad = w.grad().clone();
  const torch::Tensor x_grad = xr.grad().clone();
  w.mutable_grad() = torch::Tensor();
  Slot tied;
  tied.input = x.clone().requires_grad_(true);
  tied.output = tied.input.mm(w).mm(w);
  backward_input(tied, g8, {w});
  CHECK(torch::equal(tied.input_grad, x_grad));
  CHECK_FALSE(w.grad().defined());
  backward_weight(tied);
  CHECK(torch::equal(w.grad(), w_grad));
}

}  // namespace pipeworks::hw
