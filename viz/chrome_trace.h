// Chrome trace JSON (chrome://tracing, ui.perfetto.dev) of one or several Timelines, so a
// prediction and a measurement can be opened side by side in a standard trace viewer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"
#include "viz/span_predictions.h"

namespace pipeworks::viz {

// The file is the object form {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}:
//
//   process "<timeline> / device <d>"   one per (timeline, device that has spans or memory),
//     thread "compute" | "send" | "recv"  one per lane; tids are unique in the whole file
//     X events   one per span, ts/dur in microseconds (ns precision), args {stage, microbatch, kind}
//                and, given its prediction (span_predictions.h), {predicted_us, error_pct}
//     C events   "memory" counter, args {"bytes": N}
//   s/f events   one flow per send->recv pair, each end strictly inside its slice, "f" has bp "e"
//
// Times: each timeline is rebased to its own first span, so every timeline starts at ts 0 and a
// prediction lines up with a measurement. A memory sample before the first span is moved to 0.
//
// Repairs (deterministic, counted in otherData): on one device lane, spans are taken in order of
// (start, end, index); a span that starts before the previous one ends is clipped to start at
// that end ("clipped": true in its args); a span left with no duration (zero-length, negative,
// or wholly covered) is dropped. A flow whose send or receive span was dropped, whose indices are
// out of range, or whose receive ends before its send starts is dropped.
struct ChromeTraceCounts {
  std::size_t events = 0;         // entries in traceEvents (metadata included)
  std::size_t clipped_spans = 0;  // spans drawn shorter than given
  std::size_t dropped_spans = 0;  // spans not drawn
  std::size_t dropped_flows = 0;  // flows not drawn
};

// The whole trace as one string. Null pointers in `timelines` are skipped. `predictions[i]`,
// where given and as long as timeline i's spans, adds each span's prediction to its args.
std::string chrome_trace_json(const std::vector<const sched::Timeline*>& timelines,
                              ChromeTraceCounts* counts = nullptr, const std::vector<SpanPredictions>& predictions = {});

// Streams the trace to `path` (buffered, without building the whole string first).
sched::Status write_chrome_trace(const std::string& path, const std::vector<const sched::Timeline*>& timelines,
                                 ChromeTraceCounts* counts = nullptr,
                                 const std::vector<SpanPredictions>& predictions = {});

}  // namespace pipeworks::viz
