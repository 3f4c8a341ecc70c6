// Replays each device's program with the executor and a loopback transport (see stage_replay.h).
#include "hw/predict/stage_replay.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/executor.h"
#include "hw/exec/loopback_transport.h"
#include "hw/model/model_zoo.h"
#include "hw/model/stage_cell.h"
#include "hw/model/torch_compat.h"
#include "hw/model/torch_errors.h"
#include "hw/run/run_setup.h"
#include "hw/run/step_inputs.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {
namespace {

// What the peers would send, from one real pass of every micro-batch through the model: each
// stage's output (for RECV_F of the next) and the true gradient of that output (for RECV_B), the
// loss seeded with 1/M as the executor does; [stage][micro-batch]. Real values matter, not only
// shapes: with a constant stand-in gradient the optimizer moves the weights elsewhere, and the
// same forward on other values runs at another speed than inside the pipeline; with one
// micro-batch's output handed to every micro-batch, a stage's caches hold less than in the run.
struct PeerTensors {
  std::vector<std::vector<torch::Tensor>> outputs;
  std::vector<std::vector<torch::Tensor>> output_grads;
};

// Each tensor ends up on the device of the stage that receives it.
PeerTensors peer_tensors(const ComputeDevices& devices, std::vector<StageCell>& cells, const MicroBatches& batches,
                         int num_microbatches) {
  const std::size_t k = cells.size();
  PeerTensors out;
  out.outputs.assign(k, {});
  out.output_grads.assign(k, {});
  const auto on_stage = [&](const torch::Tensor& t, std::size_t s) { return t.to(devices.device_of(cells[s].device)); };
  for (StageCell& c : cells) c.layers->eval();  // no dropout draw outside an action
  for (std::size_t m = 0; m < batches.inputs.size(); ++m) {
    std::vector<torch::Tensor> inputs, results;
    torch::Tensor x = batches.inputs[m];
    for (std::size_t s = 0; s < k; ++s) {
      StageCell& c = cells[s];
      x = on_stage(x, s);
      const torch::Tensor in = s > 0 && x.is_floating_point() ? x.detach().requires_grad_(true) : x;
      torch::Tensor y = c.forward(in);
      out.outputs[s].push_back(s + 1 < k ? on_stage(y.detach(), s + 1) : y.detach());
      if (c.is_last) y = compute_loss(c.loss, y, on_stage(batches.targets[m], s));
      inputs.push_back(in);
      results.push_back(y);
      x = y;
    }
    std::vector<torch::Tensor> grads(k);
    torch::Tensor grad = torch::full_like(results.back(), 1.0 / num_microbatches);
    for (std::size_t s = k; s-- > 0;) {
      torch::autograd::backward({results[s]}, {grad});
      if (s > 0) {
        grads[s - 1] = on_stage(inputs[s].grad().detach(), s - 1);
        grad = grads[s - 1];
      }
    }
    grads.back() = torch::full_like(out.outputs.back().back(), 1.0 / num_microbatches);  // never received
    for (std::size_t s = 0; s < k; ++s) out.output_grads[s].push_back(grads[s]);
  }
  for (StageCell& c : cells) {
    c.layers->train();
    for (torch::Tensor p : c.parameters()) compat::drop_grad(p);
  }
  return out;
}

// Compute time of `device` in one replayed step, and its per-stage action durations.
struct DeviceStep {
  sched::Nanoseconds compute_ns = 0;
  std::vector<sched::Span> spans;
};

DeviceStep device_step(const sched::Timeline& timeline, int device) {
  DeviceStep out;
  for (const sched::Span& span : timeline.spans) {
    if (span.device != device || span.lane != sched::Lane::kCompute) continue;
    out.compute_ns += span.end_ns - span.start_ns;
    out.spans.push_back(span);
  }
  return out;
}

// Per device and action: the fastest duration seen alone and the fastest seen at once while
// another device still computed (a device whose program is shorter leaves the other alone for
// the rest; that tail is no contention).
//
//   at once  d0: [F0][F1][F2][F3][B0][B1][B2][B3]|                 d0: all counted
//            d1: [F0][F1][F2][F3][B0][B1][B2][B3][B0'][B1'] ...    d1: up to d0's end
//
// Minima, not medians: a slow spell of the machine only lengthens actions, so the fastest
// instance is the least disturbed one, and since the rounds alternate alone and at once, a spell
// long enough to reach every round of one mode reaches the other's too. (A median of per-round
// ratios lets one spell during the at-once rounds inflate the factor.)
struct Fastest {
  sched::Nanoseconds alone = std::numeric_limits<sched::Nanoseconds>::max();
  sched::Nanoseconds at_once = std::numeric_limits<sched::Nanoseconds>::max();
};
using FastestByAction = std::map<sched::Action, Fastest>;

void record_fastest(const std::vector<DeviceStep>& alone, const std::vector<DeviceStep>& at_once,
                    std::vector<FastestByAction>& fastest) {
  std::vector<sched::Nanoseconds> last_end(at_once.size(), 0);
  for (std::size_t d = 0; d < at_once.size(); ++d) {
    for (const sched::Span& span : at_once[d].spans) last_end[d] = std::max(last_end[d], span.end_ns);
  }
  for (std::size_t d = 0; d < at_once.size() && d < alone.size() && d < fastest.size(); ++d) {
    sched::Nanoseconds others_end = 0;
    for (std::size_t o = 0; o < at_once.size(); ++o) {
      if (o != d) others_end = std::max(others_end, last_end[o]);
    }
    for (const sched::Span& span : alone[d].spans) {
      Fastest& f = fastest[d][span.action];
      f.alone = std::min(f.alone, span.end_ns - span.start_ns);
    }
    for (const sched::Span& span : at_once[d].spans) {
      if (span.end_ns > others_end) continue;
      Fastest& f = fastest[d][span.action];
      f.at_once = std::min(f.at_once, span.end_ns - span.start_ns);
    }
  }
}

// (sum of the fastest at-once durations) / (sum of the same actions' fastest alone), >= 1; 1 when
// no action ran at once while another device computed.
double contention_of(const FastestByAction& fastest) {
  constexpr auto kNone = std::numeric_limits<sched::Nanoseconds>::max();
  sched::Nanoseconds together = 0, by_itself = 0;
  for (const auto& [action, f] : fastest) {
    if (f.alone == kNone || f.at_once == kNone) continue;
    together += f.at_once;
    by_itself += f.alone;
  }
  if (by_itself <= 0) return 1.0;
  return std::max(1.0, static_cast<double>(together) / static_cast<double>(by_itself));
}

}  // namespace

int replay_rounds_for(int min_rounds, int num_microbatches, int min_samples) {
  const int m = std::max(1, num_microbatches);
  return std::max(min_rounds, (std::max(0, min_samples) + m - 1) / m);
}

// Per stage, replayed kind and condition: the durations measured so far.
using StageSamples = ByKind<ByCondition<std::vector<std::int64_t>>>;

struct StageReplayer::State : ScheduleOnDevices {
  // While true, every replay worker sleeps kResumePause before each compute action (the resumed
  // steps; set between steps, one device's executor steps at a time).
  std::atomic<bool> resuming{false};
  std::vector<std::unique_ptr<Executor>> executors;  // per device, each with its own cells
  int calls = 0;                                      // rounds run, the warm-up included
  std::vector<StageSamples> samples;                  // per stage
  bool measure_resume = false;  // more than one device, on a host-synchronous device
  std::vector<std::vector<std::int64_t>> alone_ns, together_ns;  // per device
  std::vector<FastestByAction> fastest;                          // per device

  int devices() const { return schedule.num_devices(); }
  sched::Status add_executors(const sim::Partition& partition, const Model* model,
                              const std::vector<StageCell>* run_cells, const MicroBatches& microbatches);

  // Round `round`'s mini-batch, made on this thread just before the step, as measure_run does.
  sched::Result<DeviceStep> step(int d, int round) {
    auto in = step_inputs(config, *where, schedule, round);
    if (!in) return in.error();
    auto result = executors[static_cast<std::size_t>(d)]->step(in->placed, in->seed);
    if (!result) return sched::Error{fmt::format("stage replay of device {}: {}", d, result.error().message)};
    return device_step(result->timeline, d);
  }

  // All devices from one barrier, each on its own thread (its executor's worker does the work).
  sched::Result<std::vector<DeviceStep>> together(int round) {
    std::vector<sched::Result<DeviceStep>> results(static_cast<std::size_t>(devices()), sched::Error{"not run"});
    std::barrier<> start(devices());
    {
      std::vector<std::jthread> threads;
      for (int d = 0; d < devices(); ++d) {
        threads.emplace_back([&, d] {
          start.arrive_and_wait();
          results[static_cast<std::size_t>(d)] = step(d, round);
        });
      }
    }
    std::vector<DeviceStep> out;
    for (auto& r : results) {
      if (!r) return r.error();
      out.push_back(std::move(r).value());
    }
    return out;
  }

  // Each compute span's duration into its stage's and kind's samples of `condition`; for kFirst
  // only each stage's first span of the kind (spans are in program order).
  void record_spans(const DeviceStep& step, ReplayCondition condition) {
    std::set<std::pair<int, sched::ActionKind>> seen;
    for (const sched::Span& span : step.spans) {
      if (condition == ReplayCondition::kFirst && !seen.insert({span.action.stage, span.action.kind}).second) continue;
      auto* kind = samples[static_cast<std::size_t>(span.action.stage)].of(span.action.kind);
      if (kind != nullptr) (*kind)[condition].push_back(span.end_ns - span.start_ns);
    }
  }

  void record(const std::vector<DeviceStep>& alone, const std::vector<DeviceStep>& resumed,
              const std::vector<DeviceStep>& at_once) {
    if (!at_once.empty()) record_fastest(alone, at_once, fastest);
    for (const DeviceStep& step : resumed) record_spans(step, ReplayCondition::kResumed);
    for (int d = 0; d < devices(); ++d) {
      const auto i = static_cast<std::size_t>(d);
      record_spans(alone[i], ReplayCondition::kAlone);
      record_spans(alone[i], ReplayCondition::kFirst);
      alone_ns[i].push_back(alone[i].compute_ns);
      if (!at_once.empty()) together_ns[i].push_back(at_once[i].compute_ns);
    }
  }

  // Each stage's medians, minima and maxima (zeros where nothing was measured).
  std::vector<StageTimes> stage_times() const {
    std::vector<StageTimes> out(samples.size());
    for (std::size_t s = 0; s < samples.size(); ++s) {
      for (sched::ActionKind kind : kReplayedKinds) {
        for (ReplayCondition condition : kReplayConditions) {
          (*out[s].of(kind))[condition] = summarize_timings((*samples[s].of(kind))[condition]);
        }
      }
    }
    return out;
  }
};

// One executor per device running only its device, on the run's cells or, without them, on cells
// of `model`; in the resumed steps each worker sleeps before each compute action.
sched::Status StageReplayer::State::add_executors(const sim::Partition& partition, const Model* model,
                                                  const std::vector<StageCell>* run_cells,
                                                  const MicroBatches& microbatches) {
  try {
    for (int d = 0; d < schedule.num_devices(); ++d) {
      auto cells = run_cells != nullptr ? sched::Result<std::vector<StageCell>>(*run_cells)
                                        : make_cells(*model, partition, schedule.placement);
      if (!cells) return cells.error();
      place_cells(*where, *cells);
      PeerTensors peers = peer_tensors(*where, *cells, microbatches, config.num_microbatches);
      ExecutorOptions options = executor_options(config);
      options.check_finite = false;
      options.only_device = d;
      options.before_compute = [this](const sched::Action&) {
        if (resuming.load()) std::this_thread::sleep_for(kResumePause);
      };
      auto executor = make_executor_on(
          *where, schedule, std::move(cells).value(), options,
          std::make_unique<LoopbackTransport>(std::move(peers.outputs), std::move(peers.output_grads)));
      if (!executor) return sched::Error{"stage replay: " + executor.error().message};
      executors.push_back(std::move(executor).value());
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("stage replay: {}", torch_error_message(e))};
  }
  return sched::Ok{};
}

StageReplayer::StageReplayer(std::unique_ptr<State> state) : state_(std::move(state)) {}
StageReplayer::~StageReplayer() = default;

sched::Result<std::unique_ptr<StageReplayer>> StageReplayer::create(const RunConfig& config,
                                                                    const sched::Schedule& schedule,
                                                                    const sim::Partition& partition,
                                                                    const std::vector<StageCell>* run_cells) {
  if (auto size = sim::microbatch_size(config.batch_size, schedule.num_microbatches);
      !size || config.num_microbatches != schedule.num_microbatches) {
    return sched::Error{fmt::format("stage replay: batch size {} does not split into the schedule's {} micro-batches",
                                    config.batch_size, schedule.num_microbatches)};
  }
  if (partition.num_stages() != schedule.num_stages) {
    return sched::Error{fmt::format("stage replay: partition has {} stages, the schedule {}", partition.num_stages(),
                                    schedule.num_stages)};
  }
  auto base = schedule_on_devices(config, schedule);
  if (!base) return base.error();
  auto state = std::make_unique<State>();
  static_cast<ScheduleOnDevices&>(*state) = std::move(base).value();
  // A model of its own only without the run's cells.
  sched::Result<Model> model = sched::Error{"no model: the replay runs on the run's cells"};
  if (run_cells == nullptr) {
    model = build_model(config.model);
    if (!model) return model.error();
  }
  const Batch batch = make_batch(config.model, config.batch_size, config.model.seed);
  auto microbatches = split_batch(batch, config.num_microbatches);
  if (!microbatches) return microbatches.error();

  if (run_cells != nullptr && run_cells->size() != static_cast<std::size_t>(schedule.num_stages)) {
    return sched::Error{fmt::format("stage replay: {} run cells for {} stages", run_cells->size(),
                                    schedule.num_stages)};
  }
  if (auto added = state->add_executors(partition, run_cells != nullptr ? nullptr : &*model, run_cells, *microbatches);
      !added) {
    return added.error();
  }
  const auto n = static_cast<std::size_t>(schedule.num_devices());
  state->samples.resize(static_cast<std::size_t>(schedule.num_stages));
  state->measure_resume = schedule.num_devices() > 1 && !state->where->asynchronous();
  state->alone_ns.resize(n);
  state->together_ns.resize(n);
  state->fastest.resize(n);
  return std::unique_ptr<StageReplayer>(new StageReplayer(std::move(state)));
}

std::vector<RoundStep> round_plan(int devices, bool measure_resume) {
  std::vector<RoundStep> plan;
  for (int d = 0; d < devices; ++d) {
    plan.push_back({ReplayStep::kWarm, d});
    plan.push_back({ReplayStep::kAlone, d});
    if (measure_resume) plan.push_back({ReplayStep::kResumed, d});
  }
  if (devices > 1) plan.push_back({ReplayStep::kAtOnce, -1});
  return plan;
}

sched::Status StageReplayer::round() {
  State& st = *state_;
  const int round = st.calls;
  std::vector<DeviceStep> alone, resumed, at_once;  // in device order, as the plan runs them
  for (const RoundStep& s : round_plan(st.devices(), st.measure_resume)) {
    if (s.step == ReplayStep::kAtOnce) {
      auto t = st.together(round);
      if (!t) return t.error();
      at_once = std::move(t).value();
      continue;
    }
    st.resuming.store(s.step == ReplayStep::kResumed);
    auto done = st.step(s.device, round);
    st.resuming.store(false);
    if (!done) return done.error();
    if (s.step == ReplayStep::kAlone) alone.push_back(std::move(done).value());
    if (s.step == ReplayStep::kResumed) resumed.push_back(std::move(done).value());
  }
  if (st.calls++ > 0) st.record(alone, resumed, at_once);  // the first round warms up
  return sched::Ok{};
}

int StageReplayer::measured_rounds() const { return std::max(0, state_->calls - 1); }

sched::Result<ScheduleReplay> StageReplayer::result() const {
  const State& st = *state_;
  if (measured_rounds() < 1) return sched::Error{"stage replay: no measured round yet"};
  ScheduleReplay out;
  out.rounds = measured_rounds();
  out.stages = st.stage_times();
  const int devices = st.devices();
  for (std::size_t i = 0; i < static_cast<std::size_t>(devices); ++i) {
    out.device_alone.push_back(summarize_timings(st.alone_ns[i]));
    if (devices > 1) out.device_together.push_back(summarize_timings(st.together_ns[i]));
    out.device_contention.push_back(devices > 1 ? contention_of(st.fastest[i]) : 1.0);
  }
  return out;
}

sched::Result<ScheduleReplay> replay_schedule(const RunConfig& config, const sched::Schedule& schedule,
                                              const sim::Partition& partition, int rounds) {
  if (rounds < 1) return sched::Error{"stage replay: rounds must be >= 1"};
  auto replayer = StageReplayer::create(config, schedule, partition);
  if (!replayer) return replayer.error();
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
    if (auto status = (*replayer)->round(); !status) return status.error();
  }
  return (*replayer)->result();
}

}  // namespace pipeworks::hw
