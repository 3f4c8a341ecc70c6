// A GPipe-paper style Gantt chart as a self-contained SVG (no scripts, no external references):
// one row per device, actions colored by kind and shaded by micro-batch, idle time left empty.
#pragma once

#include <string>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"
#include "viz/span_predictions.h"

namespace pipeworks::viz {

//   Pipeline schedule: predicted                              <- title
//   predicted - makespan 14 ms - bubble 42.9% - 4 devices ... <- one header per timeline
//   device 0 |F0|F1|F2|F3|                     |B0|B1|B2|B3|
//            ---- thin send / recv strips (rows >= 14 px) --
//   device 1    |F0|F1|F2|F3|               |B0|B1|B2|B3|
//            0    2    4    6    8   10   12   14  time (ms) <- axis, same scale for all
//   [F forward] [B backward] ... [send] [recv] [ idle ]       <- legend
//   micro-batch 0 [ramp of shades] 127                         <- which shade is which
//
// Several timelines stack top to bottom on one time scale, each from its own first span, so a
// prediction sits above its measurement. Labels ("F3", else "3") appear only where they fit.
// Where a device runs several stages (interleaved, looped BFS, ZB-V, DualPipeV) its row label
// names them ("d0 s0,7") and the spans of its 2nd, 3rd and later stages are hatched (one way,
// the other way, dotted) over their kind's color, the hatchings in the legend (device_stages.h).
// Given each stage's layers, a row label names them too ("d3 s3 [6,8)"); the label column widens
// to fit. Transfers are at least 1.5 px wide so that short ones stay visible at any scale.
// Stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) are not drawn.
struct SvgOptions {
  int width_px = 1200;
  int row_height_px = 0;  // 0: from the device count, 28 px for few devices down to 8 px
  std::string title;      // empty: "Pipeline schedule: <names>"
  bool show_comm = true;  // thin send/recv strips under each device row (rows of 14 px or more)
  bool show_labels = true;
  // Per stage, its layers as a row label shows them (e.g. "[6,8)"); empty: labels name devices
  // and stages only.
  std::vector<std::string> stage_layers;
  // Per timeline (by position), each span's prediction (span_predictions.h): where given, that
  // timeline's compute spans are coloured by their error (kind_colors.h error_color) instead of
  // their kind, their tooltips give both durations, and the legend shows the error scale.
  std::vector<SpanPredictions> predictions;
};

std::string svg_gantt(const std::vector<const sched::Timeline*>& timelines, const SvgOptions& options = {});

sched::Status write_svg(const std::string& path, const std::vector<const sched::Timeline*>& timelines,
                        const SvgOptions& options = {});

}  // namespace pipeworks::viz
