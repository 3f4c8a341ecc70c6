// The pipeline executor (see executor.h for what each action does).
#include "hw/executor.h"

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/action_context.h"
#include "hw/counting_allocator.h"
#include "hw/inprocess_transport.h"
#include "hw/recorder.h"
#include "hw/schedule_checks.h"
#include "hw/threads.h"
#include "sched/action_index.h"

namespace pipeworks::hw {

using sched::Action;
using sched::ActionKind;

namespace {

// What one (stage, micro-batch) holds between its actions. Only the worker of the stage's
// device touches it (a stage on the same device reads its neighbour's slot on that thread).
struct Slot {
  torch::Tensor input;        // stage input (a leaf that requires grad, except stage 0's data)
  torch::Tensor output;       // stage output with its graph (last stage: the loss)
  torch::Tensor grad_output;  // received gradient of the output (RECV_B)
  torch::Tensor input_grad;   // input.grad() after B, for stage s-1
};

// A failure inside an action: the message gets the action's context added by the worker.
struct ActionError {
  std::string message;
};

std::string describe_exception(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

}  // namespace

struct Executor::State {
  sched::Schedule schedule;
  std::vector<StageCell> cells;
  ExecutorOptions options;
  std::unique_ptr<Transport> transport;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;  // one per cell
  int threads = 1;
  std::vector<std::vector<int>> worker_cpus;  // per device; empty: not pinned
  std::chrono::nanoseconds resume_pause{0};  // set between steps (the step's start orders it)
  Recorder recorder{0};
  // Per (stage, micro-batch): does the schedule hold R / RECV_F / RECV_B for it.
  std::vector<std::vector<char>> recompute, recv_f, recv_b;
  std::vector<std::vector<Slot>> slots;

  // The worker pool: one thread per local device, alive from create() to the destructor.
  //
  //   main:    step() --generation++--> notify ........ wait(finished == workers) --> result
  //   worker:  wait(generation) -> program -> barrier -> optimizer -> finished++ -> wait ...
  //   ~:       shutdown = true --> notify --> join every worker
  std::vector<int> local_devices;
  std::unique_ptr<std::barrier<>> programs_done;
  std::mutex pool_mutex;
  std::condition_variable start_cv, finished_cv;
  std::uint64_t generation = 0;
  std::size_t finished = 0;
  bool shutdown = false;
  std::vector<std::thread> workers;

  // Per step.
  const MicroBatches* batch = nullptr;
  std::uint64_t seed = 0;
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::optional<sched::Error> error;
  std::vector<double> loss_sum;  // per device (only the last stage's device adds)
  std::vector<sched::Bytes> peak_activation;

  Slot& slot(int stage, int microbatch) {
    return slots[static_cast<std::size_t>(stage)][static_cast<std::size_t>(microbatch)];
  }
  bool has(const std::vector<std::vector<char>>& table, int stage, int microbatch) const {
    return table[static_cast<std::size_t>(stage)][static_cast<std::size_t>(microbatch)] != 0;
  }
  StageCell& cell(int stage) { return cells[static_cast<std::size_t>(stage)]; }

  void fail(const std::string& message) {
    {
      const std::lock_guard lock(error_mutex);
      if (!error) error = sched::Error{message};
    }
    failed.store(true);
    transport->abort(message);
  }

  void check_finite(const torch::Tensor& t, const char* what) const {
    if (options.check_finite && t.defined() && t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) {
      throw ActionError{fmt::format("non-finite values in the {}", what)};
    }
  }

  void forward(const Action& a, int device);
  void recompute_forward(const Action& a);
  void backward(const Action& a);
  void run(const Action& a, int device);
  void run_step(int device, const std::vector<StageCell*>& own);
  void worker_loop(int device);
  void stop_workers();
};

void Executor::State::forward(const Action& a, int device) {
  const int s = a.stage;
  const int m = a.microbatch;
  Slot& here = slot(s, m);
  torch::Tensor input;
  if (s == 0) {
    input = batch->inputs[static_cast<std::size_t>(m)];
  } else {
    if (has(recv_f, s, m)) {
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

void Executor::State::backward(const Action& a) {
  const int s = a.stage;
  const int m = a.microbatch;
  Slot& here = slot(s, m);
  if (!here.output.defined() || !here.output.requires_grad()) {
    throw ActionError{"no forward graph to run backward through (F/R did not run)"};
  }
  torch::Tensor grad;
  if (cell(s).is_last) {
    grad = torch::full_like(here.output, 1.0 / schedule.num_microbatches);
  } else if (has(recv_b, s, m)) {
    grad = here.grad_output;
  } else {
    Slot& next = slot(s + 1, m);
    grad = next.input_grad;
    next.input_grad = torch::Tensor();
  }
  if (!grad.defined()) throw ActionError{"the gradient of the stage output has not arrived"};
  torch::autograd::backward({here.output}, {grad});
  if (s > 0) {
    here.input_grad = here.input.grad();
    check_finite(here.input_grad, "input gradient");
  }
  here.output = torch::Tensor();
  here.input = torch::Tensor();
  here.grad_output = torch::Tensor();
}

void Executor::State::run(const Action& a, int device) {
  const ActionContext context{seed, a.microbatch, a.kind};
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
      if (!here.input_grad.defined()) throw ActionError{"nothing to send: B did not run"};
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
    case ActionKind::kBackwardWeight:
      throw ActionError{"split backward (I/W) is not supported"};
  }
}

void Executor::State::run_step(int device, const std::vector<StageCell*>& own) {
  recorder.start_device(device);
  for (StageCell* c : own) drop_grads(c->parameters());
  const sched::Bytes baseline = live_bytes(device);
  reset_peak(device);
  for (const Action& a : schedule.programs[static_cast<std::size_t>(device)]) {
    if (failed.load()) break;
    if (resume_pause.count() > 0 && sched::is_compute(a.kind)) std::this_thread::sleep_for(resume_pause);
    const ClockMark start = recorder.mark(device);
    std::optional<std::string> problem;
    try {
      run(a, device);
    } catch (const ActionError& e) {
      problem = e.message;
    } catch (const std::exception& e) {
      problem = describe_exception(e);
    } catch (...) {
      problem = "unknown exception";
    }
    const ClockMark end = recorder.mark(device);
    recorder.record(device, a, start, end);
    if (problem) {
      fail(fmt::format("stage {}, action {} (micro-batch {}) on device {}: {}", a.stage, to_string(a), a.microbatch,
                       device, *problem));
      break;
    }
    if (sched::is_compute(a.kind) && options.measure_memory) {
      recorder.sample_memory(device, end, live_bytes(device) - baseline);
    }
  }
  peak_activation[static_cast<std::size_t>(device)] = options.measure_memory ? peak_bytes(device) - baseline : 0;
  programs_done->arrive_and_wait();
  if (failed.load()) return;
  try {
    for (StageCell* c : own) optimizers[static_cast<std::size_t>(c->stage)]->step();
  } catch (const std::exception& e) {
    fail(fmt::format("optimizer step on device {}: {}", device, describe_exception(e)));
  }
}

void Executor::State::worker_loop(int device) {
  const DeviceScope device_scope(device);
  set_worker_threads(threads);
  std::vector<StageCell*> own;
  for (StageCell& c : cells) {
    if (c.device == device) own.push_back(&c);
  }
  std::uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock lock(pool_mutex);
      start_cv.wait(lock, [&] { return shutdown || generation != seen; });
      if (shutdown) return;
      seen = generation;
    }
    run_step(device, own);
    {
      const std::lock_guard lock(pool_mutex);
      ++finished;
    }
    finished_cv.notify_one();
  }
}

void Executor::State::stop_workers() {
  {
    const std::lock_guard lock(pool_mutex);
    shutdown = true;
  }
  start_cv.notify_all();
  for (std::thread& t : workers) {
    if (t.joinable()) t.join();
  }
  workers.clear();
}

Executor::Executor(std::unique_ptr<State> state) : state_(std::move(state)) {}
Executor::~Executor() {
  if (state_) state_->stop_workers();
}

sched::Result<std::unique_ptr<Executor>> Executor::create(sched::Schedule schedule, std::vector<StageCell> cells,
                                                          ExecutorOptions options,
                                                          std::unique_ptr<Transport> transport) {
  if (auto status = check_executable(schedule); !status) return sched::Error{"executor: " + status.error().message};
  const int k = schedule.num_stages;
  const int m = schedule.num_microbatches;
  if (static_cast<int>(cells.size()) != k) {
    return sched::Error{fmt::format("executor: {} cells for {} stages", cells.size(), k)};
  }
  for (int s = 0; s < k; ++s) {
    const StageCell& c = cells[static_cast<std::size_t>(s)];
    if (c.stage != s || c.device != schedule.device_of(s) || c.is_last != (s + 1 == k)) {
      return sched::Error{fmt::format("executor: cell {} is stage {} on device {}, the schedule has stage {} on "
                                      "device {}",
                                      s, c.stage, c.device, s, schedule.device_of(s))};
    }
  }
  if (options.measure_memory && schedule.num_devices() > kMaxCountedDevices) {
    return sched::Error{fmt::format("executor: memory is counted for at most {} devices", kMaxCountedDevices)};
  }
  if (options.only_device && (*options.only_device < 0 || *options.only_device >= schedule.num_devices())) {
    return sched::Error{fmt::format("executor: only_device {} is not one of the {} devices", *options.only_device,
                                    schedule.num_devices())};
  }
  if (options.measure_memory) install_counting_allocator();
  auto state = std::make_unique<State>();
  auto index = sched::ActionIndex::build(schedule);
  if (!index) return index.error();
  const auto table = [&](ActionKind kind) {
    std::vector<std::vector<char>> t(static_cast<std::size_t>(k), std::vector<char>(static_cast<std::size_t>(m)));
    for (int s = 0; s < k; ++s) {
      for (int mb = 0; mb < m; ++mb) t[static_cast<std::size_t>(s)][static_cast<std::size_t>(mb)] = index->contains({s, kind, mb});
    }
    return t;
  };
  state->recompute = table(ActionKind::kRecompute);
  state->recv_f = table(ActionKind::kRecvF);
  state->recv_b = table(ActionKind::kRecvB);
  state->threads = resolve_threads_per_worker(options.threads_per_worker, schedule.num_devices());
  auto cpus = plan_worker_cpus(options.pin_workers, schedule.num_devices(), state->threads, usable_cpus());
  if (!cpus) return sched::Error{"executor: " + cpus.error().message};
  state->worker_cpus = std::move(cpus).value();
  state->transport = transport ? std::move(transport) : std::make_unique<InProcessTransport>(k);
  for (StageCell& c : cells) {
    c.layers->train();
    state->optimizers.push_back(make_optimizer(c.parameters(), options.optimizer));
  }
  state->schedule = std::move(schedule);
  state->cells = std::move(cells);
  state->options = options;
  for (int d = 0; d < state->schedule.num_devices(); ++d) {
    if (!options.only_device || *options.only_device == d) state->local_devices.push_back(d);
  }
  state->programs_done = std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(state->local_devices.size()));
  auto clocks = make_action_clocks(options.clock, state->schedule.num_devices(), state->local_devices);
  if (!clocks) return clocks.error();
  state->recorder = Recorder(std::move(clocks).value());
  // The executor owns the state from here on, so a failed thread start joins the started ones.
  auto executor = std::unique_ptr<Executor>(new Executor(std::move(state)));
  State& st = *executor->state_;
  try {
    st.workers.reserve(st.local_devices.size());
    for (int d : st.local_devices) {
      st.workers.emplace_back([&st, d] { st.worker_loop(d); });
      // Before its first step, so the OpenMP team it starts then inherits the cores.
      if (!st.worker_cpus.empty()) {
        if (auto pinned = pin_thread(st.workers.back(), st.worker_cpus[static_cast<std::size_t>(d)]); !pinned) {
          return sched::Error{fmt::format("executor: device {}: {}", d, pinned.error().message)};
        }
      }
    }
  } catch (const std::system_error& e) {
    return sched::Error{fmt::format("executor: cannot start the worker threads: {}", e.what())};
  }
  return executor;
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
  st.failed.store(false);
  st.error.reset();
  st.loss_sum.assign(devices, 0.0);
  st.peak_activation.assign(devices, 0);
  st.slots.assign(static_cast<std::size_t>(st.schedule.num_stages), std::vector<Slot>(static_cast<std::size_t>(m)));
  st.transport->reset();
  st.recorder.start_step();
  {
    std::unique_lock lock(st.pool_mutex);
    st.finished = 0;
    ++st.generation;
    st.start_cv.notify_all();
    st.finished_cv.wait(lock, [&st] { return st.finished == st.workers.size(); });
  }
  const sched::Nanoseconds step_ns = st.recorder.now_ns();
  st.slots.clear();
  st.batch = nullptr;
  if (st.failed.load()) {
    st.transport->reset();
    return *st.error;
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
void Executor::set_resume_pause(std::chrono::nanoseconds pause) {
  state_->resume_pause = std::max(pause, std::chrono::nanoseconds(0));
}

}  // namespace pipeworks::hw
