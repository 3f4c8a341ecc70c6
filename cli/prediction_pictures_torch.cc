// Both timelines of a prediction drawn for people (see prediction_pictures.h).
#include "cli/prediction_pictures.h"

#include <string>
#include <vector>

#include "cli/picture_title.h"
#include "hw/exec/device_kind.h"
#include "hw/model/model_config.h"
#include "viz/chrome_trace.h"
#include "viz/comparison.h"
#include "viz/svg_gantt.h"

namespace pipeworks::cli {

sched::Status write_prediction_pictures(const RunOutputs& outputs, const sched::Timeline& predicted,
                                        const sched::Timeline& measured, const hw::RunConfig& config,
                                        const sim::Partition& partition) {
  const std::vector<const sched::Timeline*> both{&predicted, &measured};
  const std::vector<viz::SpanPredictions> predictions{{}, viz::span_predictions(predicted, measured)};
  if (!outputs.trace.empty()) {
    if (auto s = viz::write_chrome_trace(outputs.trace, both, nullptr, predictions); !s) return s;
  }
  if (outputs.svg.empty()) return sched::Ok{};
  viz::SvgOptions svg;
  svg.title = picture_title({hw::model_display_name(config.model), std::string(hw::device_kind_name(config.device)),
                             hw::schedule_name(config), config.num_stages, config.num_microbatches, config.batch_size,
                             config.recompute},
                            "predicted vs measured");
  svg.stage_layers = sim::stage_range_texts(partition);
  svg.predictions = predictions;
  return viz::write_svg(outputs.svg, both, svg);
}

}  // namespace pipeworks::cli
