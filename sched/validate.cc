// The checks behind validate() (see validate.h): shape and placement, then one pass over the
// programs, one over stages x micro-batches, the communication checks, and the deadlock search.
#include "sched/validate.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/composite_rules.h"
#include "sched/deadlock.h"
#include "sched/dependencies.h"
#include "sched/placement.h"
#include "sched/stage_actions.h"

namespace pipeworks::sched {
namespace {

constexpr std::size_t kListedMissing = 8;

// A short list of micro-batch indices: "0, 2, 5" or "0, 1, 2, ... (40 in all)".
std::string list_indices(const std::vector<int>& indices) {
  std::string out;
  for (std::size_t i = 0; i < std::min(indices.size(), kListedMissing); ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : ", ", indices[i]);
  }
  if (indices.size() > kListedMissing) out += fmt::format(", ... ({} in all)", indices.size());
  return out;
}

class Checker {
 public:
  Checker(const Schedule& schedule, const ValidateOptions& options) : s_(schedule), options_(options) {}

  std::vector<Diagnostic> run() {
    if (!check_shape()) return std::move(out_);
    check_placement();
    auto index = ActionIndex::build(s_);
    if (!index) {
      add(DiagnosticKind::kBadShape, -1, -1, -1, index.error().message);
      return std::move(out_);
    }
    index_ = &*index;
    check_actions();
    check_composites(s_, *index_, out_);
    check_stages();
    check_stage_actions(s_, out_);
    if (has_comm_) check_comm();
    if (out_.empty()) check_deadlock();
    return std::move(out_);
  }

 private:
  void add(DiagnosticKind kind, int device, int position, int stage, std::string message,
           std::vector<Location> related = {}) {
    out_.push_back(Diagnostic{kind, device, position, stage, std::move(message), std::move(related)});
  }
  const Action& at(const Location& l) const {
    return s_.programs[static_cast<std::size_t>(l.device)][static_cast<std::size_t>(l.position)];
  }
  int device_of(int stage) const { return stage_device_[static_cast<std::size_t>(stage)]; }
  std::optional<Location> find(int stage, ActionKind kind, int microbatch) const {
    return index_->find(Action{stage, kind, microbatch});
  }
  // B(s,m) if present, else I(s,m).
  std::optional<Location> input_backward(int stage, int microbatch) const {
    if (auto b = find(stage, ActionKind::kBackward, microbatch)) return b;
    return find(stage, ActionKind::kBackwardInput, microbatch);
  }

  bool check_shape() {
    const int k = s_.num_stages;
    const int m = s_.num_microbatches;
    if (k < 1) add(DiagnosticKind::kBadShape, -1, -1, -1, fmt::format("the schedule needs at least 1 stage, it has {}", k));
    if (m < 1) {
      add(DiagnosticKind::kBadShape, -1, -1, -1, fmt::format("the schedule needs at least 1 micro-batch, it has {}", m));
    }
    if (!out_.empty()) return false;
    if (auto size = check_schedule_size(k, m); !size) {
      add(DiagnosticKind::kBadShape, -1, -1, -1, size.error().message);
      return false;
    }
    return true;
  }

  void check_placement() {
    using Rule = PlacementProblem::Rule;
    const int k = s_.num_stages;
    const int num_devices = s_.num_devices();
    stage_device_.assign(static_cast<std::size_t>(k), -1);
    for (PlacementProblem& p : placement_problems(s_.placement, k, num_devices)) {
      if (p.rule == Rule::kLength) {
        add(DiagnosticKind::kBadPlacement, -1, -1, -1, std::move(p.message));
        return;
      }
      if (p.rule == Rule::kIdleDevice) {
        add(DiagnosticKind::kBadPlacement, p.device, -1, -1, std::move(p.message));
      } else if (options_.placement_inferred && p.device < 0) {
        add(DiagnosticKind::kBadPlacement, -1, -1, p.stage,
            fmt::format("stage {} has no actions, so no device runs it", p.stage));
      } else {
        add(DiagnosticKind::kBadPlacement, -1, -1, p.stage, std::move(p.message));
      }
    }
    for (int stage = 0; stage < k; ++stage) {
      const int d = s_.placement[static_cast<std::size_t>(stage)];
      if (d >= 0 && d < num_devices) stage_device_[static_cast<std::size_t>(stage)] = d;
    }
  }

  std::string out_of_range_message(const Action& a) const {
    if (a.stage < 0 || a.stage >= s_.num_stages) {
      return fmt::format("{} names stage {} but the schedule has {} stages (0..{})", to_string(a), a.stage,
                         s_.num_stages, s_.num_stages - 1);
    }
    if (is_stage_level(a.kind)) {
      return fmt::format("{} carries micro-batch {}, but a stage-level action names none (0)", to_string(a),
                         a.microbatch);
    }
    return fmt::format("{} names micro-batch {} but the schedule has {} micro-batches (0..{})", to_string(a),
                       a.microbatch, s_.num_microbatches, s_.num_microbatches - 1);
  }

  // Range, duplicates and placement of every action, in program order.
  void check_actions() {
    struct Misplaced {
      Location first;
      int count = 0;
    };
    std::map<std::pair<int, int>, Misplaced> misplaced;  // (stage, device) -> first action there
    for (int d = 0; d < s_.num_devices(); ++d) {
      const Program& program = s_.programs[static_cast<std::size_t>(d)];
      for (int p = 0; p < static_cast<int>(program.size()); ++p) {
        const Action& a = program[static_cast<std::size_t>(p)];
        has_comm_ = has_comm_ || is_comm(a.kind);
        if (!index_->in_range(a)) {
          add(DiagnosticKind::kOutOfRange, d, p, -1, out_of_range_message(a));
          continue;
        }
        const auto first = index_->find(a);  // none for stage-level actions (stage_actions.h checks them)
        if (first && *first != Location{d, p}) {
          add(DiagnosticKind::kDuplicate, d, p, a.stage,
              fmt::format("{} appears again (first at device {} position {})", to_string(a), first->device,
                          first->position),
              {*first});
          continue;
        }
        const int home = device_of(a.stage);
        if (home >= 0 && home != d) {
          Misplaced& m = misplaced[{a.stage, d}];
          if (m.count++ == 0) m.first = Location{d, p};
        }
      }
    }
    for (const auto& [key, m] : misplaced) {
      const auto [stage, device] = key;
      const Action& a = at(m.first);
      if (options_.placement_inferred) {
        add(DiagnosticKind::kStageOnTwoDevices, m.first.device, m.first.position, stage,
            fmt::format("stage {} has actions on devices {} and {} ({} on device {}, first {})", stage,
                        device_of(stage), device, m.count, device, to_string(a)));
      } else {
        add(DiagnosticKind::kWrongDevice, m.first.device, m.first.position, stage,
            fmt::format("stage {} is placed on device {} but {} of its actions are on device {} (first {})", stage,
                        device_of(stage), m.count, device, to_string(a)));
      }
    }
  }

  static bool before(const std::optional<Location>& x, const std::optional<Location>& y) {
    return x && y && x->device == y->device && x->position < y->position;
  }

  // Counts and per-micro-batch order of each stage's compute actions.
  void check_stages() {
    for (int stage = 0; stage < s_.num_stages; ++stage) {
      std::vector<int> missing_forward;
      std::vector<int> missing_backward;
      for (int m = 0; m < s_.num_microbatches; ++m) {
        const auto f = find(stage, ActionKind::kForward, m);
        const auto b = find(stage, ActionKind::kBackward, m);
        const auto i = find(stage, ActionKind::kBackwardInput, m);
        const auto w = find(stage, ActionKind::kBackwardWeight, m);
        const auto r = find(stage, ActionKind::kRecompute, m);
        if (!f) missing_forward.push_back(m);
        if (b && (i || w)) {
          const Location split = i ? *i : *w;
          add(DiagnosticKind::kMixedBackward, split.device, split.position, stage,
              fmt::format("{} is split into I/W but {} also runs the full backward", to_string(at(split)),
                          to_string(at(*b))),
              {*b});
        } else if (!b && !(i && w)) {
          missing_backward.push_back(m);
        }
        const auto backward = b ? b : i;
        if (before(backward, f)) {
          add(DiagnosticKind::kBackwardBeforeForward, backward->device, backward->position, stage,
              fmt::format("{} runs before its forward {}", to_string(at(*backward)), to_string(at(*f))), {*f});
        }
        if (before(w, i)) {
          add(DiagnosticKind::kWeightBeforeInput, w->device, w->position, stage,
              fmt::format("{} runs before its input gradient {}", to_string(at(*w)), to_string(at(*i))), {*i});
        }
        if (before(r, f)) {
          add(DiagnosticKind::kRecomputeBeforeForward, r->device, r->position, stage,
              fmt::format("{} re-materializes before its forward {} ran", to_string(at(*r)), to_string(at(*f))), {*f});
        }
        if (r && (!backward || before(backward, r))) {
          add(DiagnosticKind::kOrphanRecompute, r->device, r->position, stage,
              fmt::format("{} is not followed by a backward of stage {} micro-batch {} that would use it",
                          to_string(at(*r)), stage, m));
        }
      }
      const int m_total = s_.num_microbatches;
      if (!missing_forward.empty()) {
        add(DiagnosticKind::kWrongCount, -1, -1, stage,
            fmt::format("stage {} has {} of {} forwards; missing micro-batches {}", stage,
                        m_total - static_cast<int>(missing_forward.size()), m_total, list_indices(missing_forward)));
      }
      if (!missing_backward.empty()) {
        add(DiagnosticKind::kWrongCount, -1, -1, stage,
            fmt::format("stage {} has {} of {} backward gradients (B, or I and W); missing micro-batches {}", stage,
                        m_total - static_cast<int>(missing_backward.size()), m_total, list_indices(missing_backward)));
      }
    }
  }

  void check_comm();
  void check_missing_comm();
  void check_deadlock();

  const Schedule& s_;
  ValidateOptions options_;
  std::vector<Diagnostic> out_;
  std::vector<int> stage_device_;  // -1 where the placement is unusable
  const ActionIndex* index_ = nullptr;
  bool has_comm_ = false;
};

void Checker::check_comm() {
  for (int d = 0; d < s_.num_devices(); ++d) {
    const Program& program = s_.programs[static_cast<std::size_t>(d)];
    for (int p = 0; p < static_cast<int>(program.size()); ++p) {
      const Action& a = program[static_cast<std::size_t>(p)];
      if (!is_comm(a.kind) || !index_->in_range(a) || *index_->find(a) != Location{d, p}) continue;
      const bool send = is_send(a.kind);
      const auto unmatched = send ? DiagnosticKind::kUnmatchedSend : DiagnosticKind::kUnmatchedRecv;
      const auto peer = comm_peer(a, s_.num_stages);
      if (!peer) {
        add(unmatched, d, p, a.stage,
            fmt::format("{} has no peer: stage {} is the {} stage", to_string(a), a.stage,
                        a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvB ? "last" : "first"));
        continue;
      }
      const auto peer_at = index_->find(*peer);
      const int here = device_of(a.stage);
      const int there = device_of(peer->stage);
      if (here >= 0 && here == there) {
        if (send || !peer_at) {
          add(DiagnosticKind::kLocalComm, d, p, a.stage,
              fmt::format("{} exchanges data between stages {} and {}, which share device {}", to_string(a), a.stage,
                          peer->stage, here));
        }
        continue;
      }
      if (!peer_at) {
        add(unmatched, d, p, a.stage, fmt::format("{} has no matching {}", to_string(a), to_string(*peer)));
      }
      // The compute action this one carries data for, on the same stage.
      const bool forward = a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvF;
      const auto compute = forward ? find(a.stage, ActionKind::kForward, a.microbatch) : input_backward(a.stage, a.microbatch);
      if (!compute || compute->device != d) continue;
      if (send && compute->position > p) {
        add(DiagnosticKind::kCommOrder, d, p, a.stage,
            fmt::format("{} sends before {} has produced the data", to_string(a), to_string(at(*compute))), {*compute});
      } else if (!send && compute->position < p) {
        add(DiagnosticKind::kCommOrder, d, p, a.stage,
            fmt::format("{} receives after {} needed the data", to_string(a), to_string(at(*compute))), {*compute});
      }
    }
  }
  check_missing_comm();
}

// In a lowered schedule every cross-device data dependency goes through a SEND/RECV pair.
void Checker::check_missing_comm() {
  for (int stage = 0; stage < s_.num_stages; ++stage) {
    const int here = device_of(stage);
    if (here < 0) continue;
    for (int m = 0; m < s_.num_microbatches; ++m) {
      if (stage > 0 && device_of(stage - 1) >= 0 && device_of(stage - 1) != here) {
        const auto f = find(stage, ActionKind::kForward, m);
        if (f && !find(stage, ActionKind::kRecvF, m) && !find(stage - 1, ActionKind::kSendF, m)) {
          add(DiagnosticKind::kMissingComm, f->device, f->position, stage,
              fmt::format("{} needs the output of stage {} on device {}, but there is no {}SEND_F{} / {}RECV_F{} pair",
                          to_string(at(*f)), stage - 1, device_of(stage - 1), stage - 1, m, stage, m));
        }
      }
      if (stage + 1 < s_.num_stages && device_of(stage + 1) >= 0 && device_of(stage + 1) != here) {
        const auto b = input_backward(stage, m);
        if (b && !find(stage, ActionKind::kRecvB, m) && !find(stage + 1, ActionKind::kSendB, m)) {
          add(DiagnosticKind::kMissingComm, b->device, b->position, stage,
              fmt::format("{} needs the gradient of stage {} on device {}, but there is no {}SEND_B{} / {}RECV_B{} pair",
                          to_string(at(*b)), stage + 1, device_of(stage + 1), stage + 1, m, stage, m));
        }
      }
    }
  }
}

void Checker::check_deadlock() {
  const std::vector<CycleStep> cycle = deadlock_cycle(s_, *index_);
  if (cycle.empty()) return;
  constexpr std::size_t kListed = 24;
  std::string path;
  std::vector<Location> related;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const CycleStep& step = cycle[i];
    related.push_back(step.at);
    if (step.peer) related.push_back(*step.peer);
    if (i >= kListed) continue;
    std::string node = fmt::format("{} (d{}:{})", to_string(at(step.at)), step.at.device, step.at.position);
    if (step.peer) {
      node = fmt::format("{}={} (d{}:{}, d{}:{})", to_string(at(step.at)), to_string(at(*step.peer)), step.at.device,
                         step.at.position, step.peer->device, step.peer->position);
    }
    path += node + " -> ";
  }
  if (cycle.size() > kListed) path += fmt::format("... ({} actions in all) -> ", cycle.size());
  path += "back to the first";
  const Location first = cycle.front().at;
  add(DiagnosticKind::kDeadlock, first.device, first.position, at(first).stage,
      fmt::format("deadlock: these actions wait on each other in a cycle: {}", path), std::move(related));
}

}  // namespace

std::vector<Diagnostic> validate(const Schedule& schedule, const ValidateOptions& options) {
  return Checker(schedule, options).run();
}

}  // namespace pipeworks::sched
