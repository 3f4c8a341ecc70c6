// The title every picture a command writes (SVG) carries: the configuration it shows, so a file
// read later still says what ran, e.g.
//   transformer on cpu: 1f1b, K=4, M=8, batch 32, recompute off (predicted vs measured)
#pragma once

#include <string>

#include <fmt/format.h>

namespace pipeworks::cli {

struct PictureConfig {
  std::string model;
  std::string where;  // cluster name, or the device a run used
  std::string schedule;
  int stages = 0;
  int microbatches = 0;
  int batch = 0;
  bool recompute = false;
};

inline std::string picture_title(const PictureConfig& c, const std::string& what) {
  return fmt::format("{} on {}: {}, K={}, M={}, batch {}, recompute {} ({})", c.model, c.where, c.schedule, c.stages,
                     c.microbatches, c.batch, c.recompute ? "on" : "off", what);
}

}  // namespace pipeworks::cli
