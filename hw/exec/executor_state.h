// The executor's state, shared by the files that implement it (executor.cc: the step, its
// phases and workers; executor_actions.cc: what each action does). Private to them: the rest of
// the tree uses executor.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/executor.h"
#include "hw/exec/first_error.h"
#include "hw/exec/recorder.h"
#include "hw/exec/stage_compute.h"
#include "hw/exec/worker_pool.h"
#include "sched/action_index.h"
#include "sched/dependencies.h"

namespace pipeworks::hw {

struct Executor::State {
  sched::Schedule schedule;
  std::vector<StageCell> cells;
  ExecutorOptions options;
  std::unique_ptr<Transport> transport;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;  // one per cell
  int threads = 1;
  std::vector<std::vector<int>> worker_cpus;  // per device; empty: not pinned
  Recorder recorder{0};
  // Where each action is: the dependency rule (sched/dependencies.h) routes the data with it.
  std::optional<sched::ActionIndex> actions;
  // Per (stage, micro-batch): does the schedule hold R for it (its forward keeps no graph).
  std::vector<std::vector<char>> recompute;
  std::vector<int> local_devices;              // the devices this process runs, one worker each
  std::vector<std::vector<StageCell*>> own;    // per device, the cells its worker runs
  std::vector<WorkerPool::Job> step_phases;    // the pool's round for one step

  // Per step.
  const MicroBatches* batch = nullptr;
  std::uint64_t seed = 0;
  FirstError first_error;
  std::vector<std::vector<Slot>> slots;
  std::vector<double> loss_sum;  // per device (only the last stage's device adds)
  std::vector<sched::Bytes> peak_activation;
  // Per stage: the REDUCE_GRAD posted this step and its start, for its span (replica_sync.h).
  std::vector<std::optional<std::pair<sched::Action, ClockMark>>> reductions;

  // Last: destroyed first, so the workers are joined before anything they use goes.
  std::unique_ptr<WorkerPool> pool;

  Slot& slot(int stage, int microbatch) {
    return slots[static_cast<std::size_t>(stage)][static_cast<std::size_t>(microbatch)];
  }
  bool has(const std::vector<std::vector<char>>& table, int stage, int microbatch) const {
    return table[static_cast<std::size_t>(stage)][static_cast<std::size_t>(microbatch)] != 0;
  }
  StageCell& cell(int stage) { return cells[static_cast<std::size_t>(stage)]; }
  // Whether B/I(s,m)'s output gradient is its RECV_B's (its data dependency), not stage s+1's on
  // this device.
  bool received_grad(const sched::Action& a) const {
    const sched::Dependencies from = sched::data_dependencies(a, *actions, schedule.num_stages);
    return from.count > 1 && from.actions[1].kind == sched::ActionKind::kRecvB;
  }

  void fail(const std::string& message) {
    first_error.set(message);
    transport->abort(message);
  }

  void check_finite(const torch::Tensor& t, const char* what) const {
    if (options.check_finite && t.defined() && t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) {
      throw ActionError{fmt::format("non-finite values in the {}", what)};
    }
  }

  void forward(const sched::Action& a, int device);
  void recompute_forward(const sched::Action& a);
  torch::Tensor incoming_grad(const sched::Action& a);
  void backward(const sched::Action& a);
  void backward_input_action(const sched::Action& a);
  void run(const sched::Action& a, int device);
  std::optional<std::string> run_timed(const sched::Action& a, int device, sched::Bytes baseline);
  void run_program(int device);
  void step_optimizers(int device);
  void step_replicas(int device);
  void on_worker(int worker, void (State::*phase)(int device));
  sched::Status start_workers();
};

}  // namespace pipeworks::hw
