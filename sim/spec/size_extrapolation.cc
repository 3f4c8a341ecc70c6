// Reading a spec outside its profiled sizes (see size_extrapolation.h).
#include "sim/spec/size_extrapolation.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

// Every measured table of the spec, as its sizes' span.
std::vector<std::pair<int, int>> table_spans(const ModelSpec& spec) {
  std::vector<std::pair<int, int>> spans;
  const auto add = [&](const std::vector<SizePoint>& measured) {
    if (!measured.empty()) spans.emplace_back(measured.front().size, measured.back().size);
  };
  add(spec.input_bytes.measured);
  for (const LayerSpec& l : spec.layers) {
    for (const ScaledDuration* d : {&l.forward, &l.backward_input, &l.backward_weight}) add(d->measured);
    if (l.whole_backward) add(l.whole_backward->measured);
    if (l.forward_no_grad) add(l.forward_no_grad->measured);
    for (const ScaledBytes* b : {&l.output_bytes, &l.stash_bytes, &l.backward_transient_bytes}) add(b->measured);
    if (l.split_held_bytes) add(l.split_held_bytes->measured);
  }
  for (const StageTemporaries& t : spec.stage_temporaries) {
    for (const ScaledBytes* b : {&t.forward, &t.forward_no_grad, &t.first_backward, &t.later_backward}) {
      add(b->measured);
    }
  }
  return spans;
}

}  // namespace

std::optional<SizeExtrapolation> size_extrapolation(const ModelSpec& spec, int microbatch_size) {
  SizeExtrapolation out;
  out.microbatch_size = microbatch_size;
  for (const auto& [smallest, largest] : table_spans(spec)) {
    if (microbatch_size >= smallest && microbatch_size <= largest) continue;
    out.smallest = out.tables == 0 ? smallest : std::min(out.smallest, smallest);
    out.largest = out.tables == 0 ? largest : std::max(out.largest, largest);
    ++out.tables;
  }
  if (out.tables == 0) return std::nullopt;
  return out;
}

std::string describe(const SizeExtrapolation& e) {
  const std::string how = e.microbatch_size > e.largest
                              ? fmt::format("{:.3g}x the largest", static_cast<double>(e.microbatch_size) / e.largest)
                              : fmt::format("{:.3g}x the smallest", static_cast<double>(e.microbatch_size) / e.smallest);
  return fmt::format("micro-batch size {} is outside the profiled sizes {}..{} ({}): {} extrapolated",
                     e.microbatch_size, e.smallest, e.largest, how,
                     e.tables == 1 ? std::string("1 table") : fmt::format("{} tables", e.tables));
}

}  // namespace pipeworks::sim
