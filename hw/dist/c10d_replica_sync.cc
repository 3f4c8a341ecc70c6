// Gradient reduction and the replicated optimizer step over c10d (see c10d_replica_sync.h).
#include "hw/dist/c10d_replica_sync.h"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/model/torch_errors.h"
#include "hw/model/training.h"
#include "hw/predict/cost_fit.h"

namespace pipeworks::hw {
namespace {

using Clock = std::chrono::steady_clock;

std::string joined(const std::vector<int>& ranks) {
  std::string out = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ranks[i]);
  }
  out += ']';
  return out;
}

}  // namespace

struct C10dReplicaSync::Stage {
  int index = 0;
  std::vector<torch::Tensor> parameters;
  std::int64_t numel = 0;
  std::int64_t shard = 0;  // ceil(numel / dp): the flat buffer holds dp x shard elements
  torch::Tensor flat;      // the gradients to reduce; under ZeRO-1 also the gathered parameters
  torch::Tensor shard_grad, shard_param;  // ZeRO-1: this replica's slices
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  c10::intrusive_ptr<c10d::Work> work;  // the reduction posted this step, until step() waits for it
  // When the reduction completed (steady clock, ns), set by the work's future on c10d's thread.
  std::shared_ptr<std::atomic<std::int64_t>> done = std::make_shared<std::atomic<std::int64_t>>(0);

  std::vector<torch::Tensor> chunks() const { return flat.chunk(flat.numel() / shard); }
  // Each parameter's place in the flat buffer.
  template <typename Visit>
  void each(Visit&& visit) const {
    std::int64_t offset = 0;
    for (const torch::Tensor& p : parameters) {
      visit(p, flat.narrow(0, offset, p.numel()));
      offset += p.numel();
    }
  }
};

C10dReplicaSync::C10dReplicaSync(c10::intrusive_ptr<C10dBackend> group, ReplicaSyncOptions options)
    : group_(std::move(group)), options_(std::move(options)) {}
C10dReplicaSync::~C10dReplicaSync() = default;

sched::Result<std::shared_ptr<C10dReplicaSync>> C10dReplicaSync::create(
    c10::intrusive_ptr<C10dBackend> group, std::map<int, std::vector<at::Tensor>> stage_parameters,
    ReplicaSyncOptions options) {
  const auto dp = static_cast<std::int64_t>(options.group_ranks.size());
  if (dp < 1 || options.replica < 0 || options.replica >= dp) {
    return sched::Error{fmt::format("replica {} is not in the data-parallel group {}", options.replica,
                                    joined(options.group_ranks))};
  }
  std::shared_ptr<C10dReplicaSync> sync(new C10dReplicaSync(std::move(group), std::move(options)));
  const OptimizerConfig& optimizer = sync->options_.optimizer;
  for (auto& [index, parameters] : stage_parameters) {
    auto s = std::make_unique<Stage>();
    s->index = index;
    s->parameters = std::move(parameters);
    for (const torch::Tensor& p : s->parameters) s->numel += p.numel();
    s->shard = std::max<std::int64_t>(1, (s->numel + dp - 1) / dp);
    const torch::Tensor first = s->parameters.empty() ? torch::zeros({0}) : s->parameters.front();
    s->flat = torch::zeros({dp * s->shard}, first.options().requires_grad(false));
    if (sync->options_.zero == sim::ZeroStage::kNone) {
      s->optimizer = make_optimizer(s->parameters, optimizer);
    } else {
      const torch::NoGradGuard no_grad;
      s->each([](const torch::Tensor& p, torch::Tensor place) { place.copy_(p.detach().flatten()); });
      s->shard_param = s->chunks()[static_cast<std::size_t>(sync->options_.replica)].clone().requires_grad_(true);
      s->shard_grad = torch::zeros_like(s->shard_param.detach());
      s->optimizer = make_optimizer({s->shard_param}, optimizer);
    }
    sync->stages_[index] = std::move(s);
  }
  return sync;
}

int C10dReplicaSync::replicas() const { return static_cast<int>(options_.group_ranks.size()); }

sched::Result<C10dReplicaSync::Stage*> C10dReplicaSync::find(int stage) {
  const auto it = stages_.find(stage);
  if (it == stages_.end()) return sched::Error{fmt::format("stage {} is not on this rank", stage)};
  return it->second.get();
}

sched::Status C10dReplicaSync::reduce_grad(int stage) {
  auto found = find(stage);
  if (!found) return found.error();
  Stage& s = **found;
  if (s.work) return sched::Error{fmt::format("REDUCE_GRAD of stage {} twice in one step", stage)};
  s.done->store(0);
  try {
    const torch::NoGradGuard no_grad;
    s.flat.zero_();
    s.each([](const torch::Tensor& p, torch::Tensor place) {
      if (p.grad().defined()) place.copy_(p.grad().flatten());
    });
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("REDUCE_GRAD of stage {}: laying out its gradients: {}", stage,
                                    describe_c10d_exception(e))};
  }
  if (auto posted = post_reduction(s); !posted) return posted;
  note_completion(s);
  return sched::Ok{};
}

// The stage's reduction of `flat` (all-reduce, or reduce-scatter into this replica's shard).
sched::Status C10dReplicaSync::post_reduction(Stage& s) {
  try {
    if (options_.zero == sim::ZeroStage::kNone) {
      std::vector<at::Tensor> tensors{s.flat};
      s.work = group_->allreduce(tensors);
    } else {
      std::vector<at::Tensor> outputs{s.shard_grad};
      std::vector<std::vector<at::Tensor>> inputs{s.chunks()};
      s.work = group_->reduce_scatter(outputs, inputs);
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("REDUCE_GRAD of stage {} over ranks {}: {}", s.index, joined(options_.group_ranks),
                                    describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

// ZeRO-1: every replica's shard of the parameters gathered into `flat`.
sched::Status C10dReplicaSync::post_gather(Stage& s) {
  try {
    std::vector<std::vector<at::Tensor>> outputs{s.chunks()};
    std::vector<at::Tensor> inputs{s.shard_param.detach()};
    s.work = group_->allgather(outputs, inputs);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage {}: all-gather of the parameters over ranks {}: {}", s.index,
                                    joined(options_.group_ranks), describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

// When the work's future completes (on c10d's thread) its time goes to s.done. A work without a
// future (Gloo's reduce-scatter has none) leaves it 0: step() then takes the time its wait returned.
void C10dReplicaSync::note_completion(Stage& s) {
  try {
    s.work->getFuture()->addCallback([done = s.done](c10::ivalue::Future&) {
      done->store(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
    });
  } catch (const std::exception&) {
    s.done->store(0);
  }
}

sched::Status C10dReplicaSync::wait(Stage& s, const char* collective) {
  const std::string what = fmt::format("stage {}: {} over ranks {}", s.index, collective, joined(options_.group_ranks));
  try {
    const bool completed = s.work->wait(options_.timeout);
    s.work.reset();
    if (!completed) return sched::Error{what + ": aborted"};
  } catch (const std::exception& e) {
    s.work.reset();
    return sched::Error{fmt::format("{}: failed (deadline {} ms): {}", what, options_.timeout.count(),
                                    describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

sched::Result<Clock::time_point> C10dReplicaSync::step(int stage) {
  auto found = find(stage);
  if (!found) return found.error();
  Stage& s = **found;
  if (!s.work) {  // the program had no REDUCE_GRAD for this stage
    if (auto posted = reduce_grad(stage); !posted) return posted.error();
  }
  const bool sharded = options_.zero != sim::ZeroStage::kNone;
  if (auto reduced = wait(s, sharded ? "reduce-scatter" : "all-reduce"); !reduced) return reduced.error();
  const std::int64_t done_ns = s.done->load();
  const Clock::time_point done = done_ns > 0 ? Clock::time_point(std::chrono::nanoseconds(done_ns)) : Clock::now();
  try {
    if (!sharded) {
      s.each([](const torch::Tensor& p, const torch::Tensor& place) { p.mutable_grad() = place.view_as(p); });
      s.optimizer->step();
      return done;
    }
    s.shard_param.mutable_grad() = s.shard_grad;
    s.optimizer->step();
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage {}: optimizer step: {}", stage, describe_c10d_exception(e))};
  }
  if (auto posted = post_gather(s); !posted) return posted.error();
  if (auto gathered = wait(s, "all-gather of the parameters"); !gathered) return gathered.error();
  const torch::NoGradGuard no_grad;
  s.each([](const torch::Tensor& p, const torch::Tensor& place) { p.detach().copy_(place.view_as(p)); });
  return done;
}

sched::Result<std::vector<at::Tensor>> C10dReplicaSync::reduced_gradients(int stage) {
  auto found = find(stage);
  if (!found) return found.error();
  Stage& s = **found;
  std::vector<at::Tensor> out;
  if (options_.zero == sim::ZeroStage::kNone) {
    for (const torch::Tensor& p : s.parameters) out.push_back(p.grad());
    return out;
  }
  torch::Tensor gathered = torch::empty_like(s.flat);
  try {
    std::vector<std::vector<at::Tensor>> outputs{gathered.chunk(replicas())};
    std::vector<at::Tensor> inputs{s.shard_grad};
    s.work = group_->allgather(outputs, inputs);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage {}: gathering the reduced gradients: {}", stage, describe_c10d_exception(e))};
  }
  if (auto ok = wait(s, "all-gather of the reduced gradients"); !ok) return ok.error();
  std::int64_t offset = 0;
  for (const torch::Tensor& p : s.parameters) {
    out.push_back(gathered.narrow(0, offset, p.numel()).view_as(p));
    offset += p.numel();
  }
  return out;
}

sched::Result<std::int64_t> C10dReplicaSync::time_median(Stage& s, int repetitions,
                                                         sched::Status (C10dReplicaSync::*post)(Stage&),
                                                         const char* collective) {
  std::vector<std::int64_t> samples;
  for (int r = 0; r <= repetitions; ++r) {
    const Clock::time_point start = Clock::now();
    if (auto posted = (this->*post)(s); !posted) return posted.error();
    if (auto done = wait(s, collective); !done) return done.error();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    if (r > 0) samples.push_back(ns);  // the first one connects and warms up
  }
  return summarize_timings(std::move(samples)).median_ns;
}

sched::Result<C10dReplicaSync::CollectiveTimes> C10dReplicaSync::time_collectives(int stage, int repetitions) {
  auto found = find(stage);
  if (!found) return found.error();
  Stage& s = **found;
  if (s.work || repetitions < 1) return sched::Error{fmt::format("stage {}: cannot time its collectives now", stage)};
  const bool sharded = options_.zero != sim::ZeroStage::kNone;
  CollectiveTimes times;
  auto reduce = time_median(s, repetitions, &C10dReplicaSync::post_reduction, sharded ? "reduce-scatter" : "all-reduce");
  if (!reduce) return reduce.error();
  times.reduce_ns = *reduce;
  if (!sharded) return times;
  auto gather = time_median(s, repetitions, &C10dReplicaSync::post_gather, "all-gather of the parameters");
  if (!gather) return gather.error();
  times.gather_ns = *gather;
  return times;
}

}  // namespace pipeworks::hw
