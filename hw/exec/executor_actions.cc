// What each action of a program does on the executor's state (see executor.h for the table).
#include <optional>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/executor_state.h"
#include "hw/model/action_context.h"

namespace pipeworks::hw {

using sched::Action;
using sched::ActionKind;

void Executor::State::forward(const Action& a, int device) {
  const int s = a.stage;
  const int m = a.microbatch;
  Slot& here = slot(s, m);
  torch::Tensor input;
  if (s == 0) {
    input = batch->inputs[static_cast<std::size_t>(m)];
  } else {
    // Its data dependency: RECV_F(s,m), which left the input in this slot, or F(s-1,m) on this
    // device.
    const sched::Dependencies from = sched::data_dependencies(a, *actions, schedule.num_stages);
    if (from.count > 0 && from.actions[0].kind == ActionKind::kRecvF) {
      input = here.input;
      if (!input.defined()) throw ActionError{fmt::format("input of {} was not received", to_string(a))};
    } else {
      Slot& previous = slot(s - 1, m);
      if (!previous.output.defined()) {
        throw ActionError{fmt::format("stage {} has not produced micro-batch {} on this device yet", s - 1, m)};
      }
      input = previous.output;
      if (has(recompute, s - 1, m)) previous.output = torch::Tensor();
    }
    input = input.detach().requires_grad_(true);
  }
  here.input = input;
  StageCell& c = cell(s);
  torch::Tensor output;
  {
    std::optional<torch::NoGradGuard> no_grad;
    if (has(recompute, s, m)) no_grad.emplace();
    output = c.forward(input);
    check_finite(output, "stage output");
    if (c.is_last) {
      output = compute_loss(c.loss, output, batch->targets[static_cast<std::size_t>(m)]);
      check_finite(output, "loss");
      loss_sum[static_cast<std::size_t>(device)] += output.item<double>();
    }
  }
  here.output = output;
}

void Executor::State::recompute_forward(const Action& a) {
  Slot& here = slot(a.stage, a.microbatch);
  if (!here.input.defined()) throw ActionError{"no stage input kept for re-materialization (F did not run)"};
  StageCell& c = cell(a.stage);
  torch::Tensor output = c.forward(here.input);
  if (c.is_last) output = compute_loss(c.loss, output, batch->targets[static_cast<std::size_t>(a.microbatch)]);
  here.output = output;
}

// The gradient of (s, m)'s output: 1/M of the loss on the last stage, else the one received or
// left by stage s+1 on this device.
torch::Tensor Executor::State::incoming_grad(const Action& a) {
  const int s = a.stage;
  const int m = a.microbatch;
  Slot& here = slot(s, m);
  if (!here.output.defined() || !here.output.requires_grad()) {
    throw ActionError{"no forward graph to run backward through (F/R did not run)"};
  }
  torch::Tensor grad;
  if (cell(s).is_last) {
    const int replicas = options.replicas ? options.replicas->replicas() : 1;
    grad = torch::full_like(here.output, 1.0 / (static_cast<double>(schedule.num_microbatches) * replicas));
  } else if (received_grad(a)) {
    grad = here.grad_output;
  } else {
    Slot& next = slot(s + 1, m);
    grad = next.input_grad;
    next.input_grad = torch::Tensor();
  }
  if (!grad.defined()) throw ActionError{"the gradient of the stage output has not arrived"};
  here.grad_output = torch::Tensor();
  return grad;
}

void Executor::State::backward(const Action& a) {
  Slot& here = slot(a.stage, a.microbatch);
  torch::autograd::backward({here.output}, {incoming_grad(a)});
  if (a.stage > 0) {
    here.input_grad = here.input.grad();
    check_finite(here.input_grad, "input gradient");
  }
  here.output = torch::Tensor();
  here.input = torch::Tensor();
}

// I: the input gradient now (for stage s-1), the graph and what W needs kept (stage_compute.h).
void Executor::State::backward_input_action(const Action& a) {
  Slot& here = slot(a.stage, a.microbatch);
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : cell(a.stage).parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  backward_input(here, incoming_grad(a), params);
  if (a.stage > 0) check_finite(here.input_grad, "input gradient");
  here.input = torch::Tensor();
}

void Executor::State::run(const Action& a, int device) {
  const ActionContext context{seed, a.microbatch + options.microbatch_offset, a.kind};
  const ActionScope scope(context);
  Slot& here = slot(a.stage, a.microbatch);
  auto unwrap = [](sched::Status status) {
    if (!status) throw ActionError{status.error().message};
  };
  switch (a.kind) {
    case ActionKind::kForward:
      forward(a, device);
      break;
    case ActionKind::kRecompute:
      recompute_forward(a);
      break;
    case ActionKind::kBackward:
      backward(a);
      break;
    case ActionKind::kSendF:
      if (!here.output.defined()) throw ActionError{"nothing to send: F did not run"};
      unwrap(transport->send(a, here.output.detach()));
      if (has(recompute, a.stage, a.microbatch)) here.output = torch::Tensor();
      break;
    case ActionKind::kSendB:
      if (!here.input_grad.defined()) throw ActionError{"nothing to send: B or I did not run"};
      unwrap(transport->send(a, here.input_grad));
      here.input_grad = torch::Tensor();
      break;
    case ActionKind::kRecvF: {
      auto received = transport->recv(a, options.recv_timeout);
      if (!received) throw ActionError{received.error().message};
      here.input = std::move(received).value();
      break;
    }
    case ActionKind::kRecvB: {
      auto received = transport->recv(a, options.recv_timeout);
      if (!received) throw ActionError{received.error().message};
      here.grad_output = std::move(received).value();
      break;
    }
    case ActionKind::kBackwardInput:
      backward_input_action(a);
      break;
    case ActionKind::kBackwardWeight:
      if (!here.pending) throw ActionError{"no input-gradient pass (I) to take the weight gradients from"};
      backward_weight(here);
      break;
    case ActionKind::kReduceGrad:
      if (options.replicas) unwrap(options.replicas->reduce_grad(a.stage));
      break;
    case ActionKind::kUnshard:
    case ActionKind::kReshard:
      break;  // stage-level: no-ops in one process (docs/schedules.md)
  }
}

}  // namespace pipeworks::hw
