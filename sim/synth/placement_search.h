// Synthesis with the placement searched too: the placements of K stages on D devices that the
// hand-written schedules people train with use, each searched as `synthesize --placement` would
// search it (its own links and shared caps, problem_from_specs.h) with an even share of the time
// limit; the fastest that fits is the answer.
//
//   K = D    one stage per device   0 1 2 3           (gpipe, 1f1b, zb-h1, zb-h2)
//   K = 2D   the V                  0 1 2 3 3 2 1 0   (zb-v, dualpipe-v)
//   K = vD   the loop, v >= 2       0 1 2 3 0 1 2 3   (interleaved-1f1b, looped-bfs, interleaved-zb)
#pragma once

#include <string>
#include <vector>

#include "sched/result.h"
#include "sim/synth/placement_trial.h"
#include "sim/synth/problem_from_specs.h"
#include "sim/synth/synthesize.h"

namespace pipeworks::sim {

// The candidates for K stages on D devices in the order above; empty where none places K on D.
std::vector<PlacementCandidate> candidate_placements(int num_stages, int num_devices);

struct PlacementSearch {
  // The problem of the placement that won; its inputs.placements_tried holds every candidate's
  // trial, in candidate_placements' order.
  SpecSynthesis chosen;
  SynthesisResult result;
};

// `setup.placement` is ignored (the candidates replace it). Errors: no candidate places K stages
// on `num_devices` devices (the message names the shapes that would), or every candidate failed
// (each one's reason).
sched::Result<PlacementSearch> synthesize_placements(const ModelSpec& model, const ClusterSpec& cluster,
                                                     SynthesisSetup setup, const SearchOptions& options,
                                                     int num_devices);

}  // namespace pipeworks::sim
