// Predicted duration and error per measured span (see span_predictions.h).
#include "viz/span_predictions.h"


#include "viz/comparison.h"

namespace pipeworks::viz {

SpanPredictions span_predictions(const sched::Timeline& predicted, const sched::Timeline& measured) {
  const std::vector<std::optional<std::size_t>> partners = pair_spans(measured, predicted);
  SpanPredictions out;
  out.reserve(measured.spans.size());
  for (std::size_t i = 0; i < measured.spans.size(); ++i) {
    if (!partners[i]) {
      out.emplace_back();
      continue;
    }
    const sched::Nanoseconds ns = predicted.spans[*partners[i]].duration_ns();
    out.push_back(SpanPrediction{ns, relative_error(static_cast<double>(ns),
                                                    static_cast<double>(measured.spans[i].duration_ns()))});
  }
  return out;
}

}  // namespace pipeworks::viz
