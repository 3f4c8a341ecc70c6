// What `pipeworks synthesize` prints: the synthesized schedule's step, bubble and per-device peak
// against the cap, the lower bound and the gap to it, the hand-written families under the same
// cap (the best marked), and what the search did.
#pragma once

#include <string>

#include "sim/synth/synthesis_report.h"

namespace pipeworks::cli {

std::string synthesis_summary(const sim::SynthesisResult& result, const sim::SynthesisInputs& inputs);

}  // namespace pipeworks::cli
