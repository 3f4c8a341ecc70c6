// Predicted duration and error per measured span (see span_predictions.h).
#include "viz/span_predictions.h"

#include <map>

#include "viz/comparison.h"

namespace pipeworks::viz {

SpanPredictions span_predictions(const sched::Timeline& predicted, const sched::Timeline& measured) {
  std::map<sched::Action, sched::Nanoseconds> predicted_ns;
  for (const sched::Span& s : predicted.spans) predicted_ns.emplace(s.action, s.duration_ns());
  SpanPredictions out;
  out.reserve(measured.spans.size());
  for (const sched::Span& s : measured.spans) {
    const auto found = predicted_ns.find(s.action);
    if (found == predicted_ns.end()) {
      out.emplace_back();
      continue;
    }
    out.push_back(SpanPrediction{found->second, relative_error(static_cast<double>(found->second),
                                                                static_cast<double>(s.duration_ns()))});
  }
  return out;
}

}  // namespace pipeworks::viz
