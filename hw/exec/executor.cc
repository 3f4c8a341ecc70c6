// The pipeline executor: a step, its two phases and the workers (see executor.h;
// executor_actions.cc does each action, executor_state.h holds what both share).
#include "hw/exec/executor.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/counting_allocator.h"
#include "hw/exec/executor_inputs.h"
#include "hw/exec/executor_state.h"
#include "hw/exec/first_error.h"
#include "hw/exec/inprocess_transport.h"
#include "hw/exec/recorder.h"
#include "hw/exec/stage_compute.h"
#include "hw/exec/threads.h"
#include "hw/exec/worker_pool.h"
#include "hw/model/action_context.h"
#include "hw/model/torch_errors.h"
#include "sched/action_index.h"
#include "sched/dependencies.h"

namespace pipeworks::hw {

using sched::Action;
using sched::ActionKind;

namespace {

// Per (stage, micro-batch), whether the schedule holds the action of `kind` for it.
std::vector<std::vector<char>> action_table(const sched::ActionIndex& index, int stages, int microbatches,
                                            ActionKind kind) {
  std::vector<std::vector<char>> t(static_cast<std::size_t>(stages),
                                   std::vector<char>(static_cast<std::size_t>(microbatches)));
  for (int s = 0; s < stages; ++s) {
    for (int m = 0; m < microbatches; ++m) {
      t[static_cast<std::size_t>(s)][static_cast<std::size_t>(m)] = index.contains({s, kind, m});
    }
  }
  return t;
}

}  // namespace


// Times `a` on its device's clock and records its span; what went wrong, if anything.
std::optional<std::string> Executor::State::run_timed(const Action& a, int device, sched::Bytes baseline) {
  const ClockMark start = recorder.mark(device);
  std::optional<std::string> problem = guarded([&] { run(a, device); });
  const ClockMark end = recorder.mark(device);
  if (a.kind == ActionKind::kReduceGrad && options.replicas) {
    reductions[static_cast<std::size_t>(a.stage)] = std::make_pair(a, start);  // recorded once it completed
  } else {
    recorder.record(device, a, start, end);
  }
  if (!problem && sched::is_compute(a.kind) && options.measure_memory) {
    recorder.sample_memory(device, end, live_bytes(device) - baseline);
  }
  return problem;
}

// The first phase of a step: `device`'s program, action by action, until it ends or any worker
// failed.
void Executor::State::run_program(int device) {
  recorder.start_device(device);
  for (StageCell* c : own[static_cast<std::size_t>(device)]) drop_grads(c->parameters());
  const sched::Bytes baseline = live_bytes(device);
  reset_peak(device);
  for (const Action& a : schedule.programs[static_cast<std::size_t>(device)]) {
    if (first_error.failed()) break;
    std::optional<std::string> problem;
    if (options.before_compute && sched::is_compute(a.kind)) problem = guarded([&] { options.before_compute(a); });
    if (!problem) problem = run_timed(a, device, baseline);
    if (problem) {
      fail(fmt::format("stage {}, action {} (micro-batch {}) on device {}: {}", a.stage, to_string(a), a.microbatch,
                       device, *problem));
      break;
    }
  }
  if (!first_error.failed()) {
    if (auto sent = transport->finish_sends(options.recv_timeout); !sent) {
      fail(fmt::format("device {}: {}", device, sent.error().message));
    }
  }
  peak_activation[static_cast<std::size_t>(device)] = options.measure_memory ? peak_bytes(device) - baseline : 0;
}

// The second phase with replicas: each of `device`'s stages waits for its reduction, whose span
// ends when it completed (on a clock that cannot tell, when the wait returned), and steps.
void Executor::State::step_replicas(int device) {
  for (StageCell* c : own[static_cast<std::size_t>(device)]) {
    auto done = options.replicas->step(c->stage);
    if (!done) throw ActionError{done.error().message};  // names the stage
    const auto& posted = reductions[static_cast<std::size_t>(c->stage)];
    if (!posted) continue;
    const ClockMark end = recorder.mark_at(device, *done).value_or(recorder.mark(device));
    recorder.record(device, posted->first, posted->second, std::max(posted->second, end));
  }
}

// The second phase, once every program ended: `device`'s optimizers, unless the step failed.
void Executor::State::step_optimizers(int device) {
  if (first_error.failed()) return;
  if (options.replicas) {
    if (auto problem = guarded([&] { step_replicas(device); })) {
      fail(fmt::format("optimizer step on device {}: {}", device, *problem));
    }
    return;
  }
  try {
    for (StageCell* c : own[static_cast<std::size_t>(device)]) optimizers[static_cast<std::size_t>(c->stage)]->step();
  } catch (const std::exception& e) {
    fail(fmt::format("optimizer step on device {}: {}", device, torch_error_message(e)));
  }
}

// A phase on pool worker `worker`: its device's allocations are counted as that device's, and
// anything the phase throws fails the step (and so stops the other workers).
void Executor::State::on_worker(int worker, void (State::*phase)(int device)) {
  const int device = local_devices[static_cast<std::size_t>(worker)];
  const DeviceScope device_scope(device);
  if (auto problem = guarded([&] { (this->*phase)(device); })) fail(fmt::format("device {}: {}", device, *problem));
}

// One worker per local device, each pinned to its device's cores when asked (before the first
// step, so the OpenMP team a worker starts then inherits them).
sched::Status Executor::State::start_workers() {
  own.assign(static_cast<std::size_t>(schedule.num_devices()), {});
  for (StageCell& c : cells) own[static_cast<std::size_t>(c.device)].push_back(&c);
  step_phases = {[this](int worker) { on_worker(worker, &State::run_program); },
                 [this](int worker) { on_worker(worker, &State::step_optimizers); }};
  // Each worker pins itself before LibTorch starts helper threads of its own (at::set_num_threads
  // starts a pthreadpool), so that those inherit its cores; pin() below reports any failure.
  auto started = WorkerPool::create(static_cast<int>(local_devices.size()), [this](int worker) {
    if (!worker_cpus.empty()) {
      (void)pin_current_thread(worker_cpus[static_cast<std::size_t>(local_devices[static_cast<std::size_t>(worker)])]);
    }
    set_worker_threads(threads);
  });
  if (!started) return sched::Error{"executor: " + started.error().message};
  pool = std::move(started).value();
  if (worker_cpus.empty()) return sched::Ok{};
  for (std::size_t w = 0; w < local_devices.size(); ++w) {
    const int d = local_devices[w];
    if (auto pinned = pool->pin(static_cast<int>(w), worker_cpus[static_cast<std::size_t>(d)]); !pinned) {
      return sched::Error{fmt::format("executor: device {}: {}", d, pinned.error().message)};
    }
  }
  return sched::Ok{};
}

Executor::Executor(std::unique_ptr<State> state) : state_(std::move(state)) {}
Executor::~Executor() = default;

sched::Result<std::unique_ptr<Executor>> Executor::create(sched::Schedule schedule, std::vector<StageCell> cells,
                                                          ExecutorOptions options,
                                                          std::unique_ptr<Transport> transport) {
  if (auto status = check_executor_inputs(schedule, cells, options); !status) return status.error();
  const int k = schedule.num_stages;
  if (options.measure_memory) install_counting_allocator();
  auto state = std::make_unique<State>();
  auto index = sched::ActionIndex::build(schedule);
  if (!index) return index.error();
  state->recompute = action_table(*index, k, schedule.num_microbatches, ActionKind::kRecompute);
  state->actions = std::move(index).value();
  state->threads = resolve_threads_per_worker(options.threads_per_worker, schedule.num_devices());
  auto cpus = plan_worker_cpus(options.pin_workers, schedule.num_devices(), state->threads, usable_cpus());
  if (!cpus) return sched::Error{"executor: " + cpus.error().message};
  state->worker_cpus = std::move(cpus).value();
  state->transport = transport ? std::move(transport) : std::make_unique<InProcessTransport>(k);
  for (StageCell& c : cells) {
    c.layers->train();
    if (!options.replicas) state->optimizers.push_back(make_optimizer(c.parameters(), options.optimizer));
  }
  state->schedule = std::move(schedule);
  state->cells = std::move(cells);
  state->options = std::move(options);
  for (int d = 0; d < state->schedule.num_devices(); ++d) {
    if (!state->options.only_device || *state->options.only_device == d) state->local_devices.push_back(d);
  }
  auto clocks = make_action_clocks(state->options.clock, state->schedule.num_devices(), state->local_devices);
  if (!clocks) return clocks.error();
  state->recorder = Recorder(std::move(clocks).value());
  if (auto started = state->start_workers(); !started) return started.error();
  return std::unique_ptr<Executor>(new Executor(std::move(state)));
}

sched::Result<StepResult> Executor::step(const MicroBatches& batch, std::uint64_t seed) {
  State& st = *state_;
  const int m = st.schedule.num_microbatches;
  if (batch.size() != m || static_cast<int>(batch.targets.size()) != m) {
    return sched::Error{fmt::format("executor: {} micro-batches given, the schedule has {}", batch.size(), m)};
  }
  const auto devices = static_cast<std::size_t>(st.schedule.num_devices());
  st.batch = &batch;
  st.seed = seed;
  st.first_error.reset();
  st.loss_sum.assign(devices, 0.0);
  st.peak_activation.assign(devices, 0);
  st.reductions.assign(static_cast<std::size_t>(st.schedule.num_stages), std::nullopt);
  st.slots.assign(static_cast<std::size_t>(st.schedule.num_stages), std::vector<Slot>(static_cast<std::size_t>(m)));
  st.transport->reset();
  st.recorder.start_step();
  const std::vector<sched::Status> outcomes = st.pool->run(st.step_phases);
  const sched::Nanoseconds step_ns = st.recorder.now_ns();
  // on_worker turns every failure into fail(); a failed outcome here would be one it missed.
  for (std::size_t w = 0; w < outcomes.size(); ++w) {
    if (!outcomes[w]) st.fail(fmt::format("device {}: {}", st.local_devices[w], outcomes[w].error().message));
  }
  st.slots.clear();
  st.batch = nullptr;
  if (st.first_error.failed()) {
    st.transport->reset();
    return st.first_error.error();
  }
  if (auto timed = st.recorder.finish_step(); !timed) return sched::Error{"executor: " + timed.error().message};
  StepResult result;
  result.timeline = st.recorder.timeline(st.schedule);
  for (double l : st.loss_sum) result.loss += l;
  result.loss /= m;
  result.step_ns = step_ns;
  result.peak_activation_bytes = st.peak_activation;
  return result;
}

std::vector<StageCell>& Executor::cells() { return state_->cells; }
const sched::Schedule& Executor::schedule() const { return state_->schedule; }
int Executor::threads_per_worker() const { return state_->threads; }
const std::vector<std::vector<int>>& Executor::worker_cpus() const { return state_->worker_cpus; }

}  // namespace pipeworks::hw
