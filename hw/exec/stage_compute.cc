// The split backward at operator granularity (see stage_compute.h).
#include "hw/exec/stage_compute.h"

#include <unordered_map>
#include <unordered_set>

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include "hw/model/torch_compat.h"

namespace pipeworks::hw {

using torch::autograd::Edge;
using torch::autograd::Node;

// A node W starts from: the gradients flowing into it (one per input of the node, as I captured
// them) and the gradient edges of the parameters it leads to.
struct WeightRoot {
  compat::NodePtr node;
  std::vector<torch::Tensor> grads;
  torch::autograd::edge_list params;
};

struct PendingWeightGradients {
  std::vector<WeightRoot> roots;
  // The fallback: W takes every parameter's gradient from the stage output (tied parameters).
  std::vector<torch::Tensor> whole_params;
  torch::Tensor output_grad;
};

namespace {

// The graph behind a stage output, cut where its parameter-only subgraphs meet the rest.
class GraphCut {
 public:
  GraphCut(const torch::Tensor& output, const std::vector<torch::Tensor>& params) {
    for (const torch::Tensor& p : params) params_.insert(p.unsafeGetTensorImpl());
    const Edge root = torch::autograd::impl::gradient_edge(output);
    if (!root.is_valid()) return;
    if (param_only(root.function.get())) {  // the first stage: W runs from the output
      add_root(root.function, root.function);
      roots_.back().grads.assign(root.function->num_inputs(), torch::Tensor());
      root_input_ = root.input_nr;
      return;
    }
    find_roots(root.function);
  }

  // False where a parameter is reached from two roots (its gradient would be counted twice).
  bool splits() const { return splits_; }
  // -1, or the input of the single root that the output's gradient enters (the first stage).
  std::int64_t root_input() const { return root_input_; }
  std::vector<WeightRoot>& roots() { return roots_; }

 private:
  // Whether every path from `node` ends at a parameter (memoized; iterative, graphs are deep).
  bool param_only(Node* start) {
    std::vector<std::pair<Node*, std::size_t>> stack{{start, 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (memo_.count(node) != 0) {
        stack.pop_back();
        continue;
      }
      if (auto* acc = dynamic_cast<torch::autograd::AccumulateGrad*>(node)) {
        memo_[node] = params_.count(acc->variable.unsafeGetTensorImpl()) != 0;
        stack.pop_back();
        continue;
      }
      const auto& edges = node->next_edges();
      while (next < edges.size() && (!edges[next].is_valid() || memo_.count(edges[next].function.get()) != 0)) ++next;
      if (next < edges.size()) {
        stack.emplace_back(edges[next].function.get(), 0);
        continue;
      }
      bool only = true;
      for (const Edge& e : edges) only = only && (!e.is_valid() || memo_.at(e.function.get()));
      memo_[node] = only;
      stack.pop_back();
    }
    return memo_.at(start);
  }

  // Every node on the activation path with an edge into a parameter-only subgraph is a root.
  void find_roots(const compat::NodePtr& start) {
    std::vector<compat::NodePtr> todo{start};
    std::unordered_set<Node*> seen{start.get()};
    while (!todo.empty()) {
      const compat::NodePtr node = todo.back();
      todo.pop_back();
      bool is_root = false;
      for (const Edge& e : node->next_edges()) {
        if (!e.is_valid()) continue;
        if (param_only(e.function.get())) {
          is_root = true;
        } else if (seen.insert(e.function.get()).second) {
          todo.push_back(e.function);
        }
      }
      if (is_root) add_root(node, nullptr);
    }
  }

  // A root and the parameters it reaches through parameter-only nodes (all of them from `only`).
  void add_root(const compat::NodePtr& node, const compat::NodePtr& only) {
    WeightRoot root;
    root.node = node;
    std::vector<compat::NodePtr> todo;
    if (only) {
      todo.push_back(only);
    } else {
      for (const Edge& e : node->next_edges()) {
        if (e.is_valid() && memo_.at(e.function.get())) todo.push_back(e.function);
      }
    }
    std::unordered_set<Node*> seen;
    while (!todo.empty()) {
      const compat::NodePtr n = todo.back();
      todo.pop_back();
      if (!seen.insert(n.get()).second) continue;
      if (dynamic_cast<torch::autograd::AccumulateGrad*>(n.get()) != nullptr) {
        root.params.emplace_back(n, 0);
        splits_ = splits_ && reached_.insert(n.get()).second;
        continue;
      }
      for (const Edge& e : n->next_edges()) {
        if (e.is_valid()) todo.push_back(e.function);
      }
    }
    roots_.push_back(std::move(root));
  }

  std::unordered_set<const c10::TensorImpl*> params_;
  std::unordered_map<Node*, bool> memo_;
  std::unordered_set<Node*> reached_;  // parameters' accumulators reached from some root
  std::vector<WeightRoot> roots_;
  std::int64_t root_input_ = -1;
  bool splits_ = true;
};

// The gradient of `input` alone from `grad` of `output`, the graph kept; undefined when unused.
torch::Tensor input_gradient(const torch::Tensor& output, const torch::Tensor& input, const torch::Tensor& grad) {
  return torch::autograd::grad({output}, {input}, {grad}, /*retain_graph=*/true, /*create_graph=*/false,
                               /*allow_unused=*/true)[0];
}

}  // namespace

void backward_input(Slot& slot, const torch::Tensor& grad, const std::vector<torch::Tensor>& params) {
  auto pending = std::make_shared<PendingWeightGradients>();
  const bool wants_input = slot.input.defined() && slot.input.requires_grad();
  GraphCut cut(slot.output, params);
  if (!cut.splits()) {
    if (wants_input) slot.input_grad = input_gradient(slot.output, slot.input, grad);
    pending->whole_params = params;
    pending->output_grad = grad;
    slot.pending = std::move(pending);
    return;
  }
  pending->roots = std::move(cut.roots());
  if (cut.root_input() >= 0) {  // nothing on the way to the input: W runs from the output
    pending->roots.front().grads[static_cast<std::size_t>(cut.root_input())] = grad;
    slot.pending = std::move(pending);
    return;
  }
  torch::autograd::edge_list captures;
  if (wants_input) captures.push_back(torch::autograd::impl::gradient_edge(slot.input));
  for (const WeightRoot& root : pending->roots) {
    for (std::uint32_t i = 0; i < root.node->num_inputs(); ++i) captures.emplace_back(root.node, i);
  }
  const torch::autograd::variable_list grads = torch::autograd::Engine::get_default_engine().execute(
      {torch::autograd::impl::gradient_edge(slot.output)}, {grad}, /*keep_graph=*/true, /*create_graph=*/false,
      /*accumulate_grad=*/false, captures);
  std::size_t next = 0;
  if (wants_input) slot.input_grad = grads[next++];
  for (WeightRoot& root : pending->roots) {
    root.grads.assign(grads.begin() + static_cast<std::ptrdiff_t>(next),
                      grads.begin() + static_cast<std::ptrdiff_t>(next + root.node->num_inputs()));
    next += root.node->num_inputs();
  }
  slot.pending = std::move(pending);
}

// The last walk over the graph frees each node's saved tensors as it goes, as a whole backward
// does: W's peak is then B's (the first stage's W runs a whole backward; sim/engine/executor_peak.h).
void backward_weight(Slot& slot) {
  PendingWeightGradients& pending = *slot.pending;
  if (!pending.whole_params.empty()) {
    torch::autograd::backward({slot.output}, {pending.output_grad}, /*retain_graph=*/!pending.roots.empty(),
                              /*create_graph=*/false, pending.whole_params);
  }
  for (WeightRoot& root : pending.roots) {
    const bool last = &root == &pending.roots.back();
    torch::autograd::edge_list edges;
    torch::autograd::variable_list grads;
    for (std::size_t i = 0; i < root.grads.size(); ++i) {
      if (!root.grads[i].defined()) continue;
      edges.emplace_back(root.node, static_cast<std::uint32_t>(i));
      grads.push_back(root.grads[i]);
    }
    if (edges.empty() || root.params.empty()) continue;
    torch::autograd::Engine::get_default_engine().execute(edges, grads, /*keep_graph=*/!last, /*create_graph=*/false,
                                                          /*accumulate_grad=*/true, root.params);
  }
  slot.pending.reset();
  slot.output = torch::Tensor();
}

std::int64_t pending_weight_bytes(const Slot& slot) {
  if (!slot.pending) return 0;
  std::int64_t bytes = 0;
  std::unordered_set<const void*> counted;  // a gradient captured at two roots is one tensor
  const auto add = [&](const torch::Tensor& t) {
    if (t.defined() && counted.insert(t.storage().data()).second) bytes += static_cast<std::int64_t>(t.storage().nbytes());
  };
  add(slot.pending->output_grad);
  for (const WeightRoot& root : slot.pending->roots) {
    for (const torch::Tensor& g : root.grads) add(g);
  }
  return bytes;
}

}  // namespace pipeworks::hw
