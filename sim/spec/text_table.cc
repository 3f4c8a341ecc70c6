// TextTable (see text_table.h).
#include "sim/spec/text_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::sim {

TextTable::TextTable(std::vector<std::pair<std::string, bool>> columns) {
  std::vector<std::string> headings;
  for (auto& [heading, right] : columns) {
    headings.push_back(std::move(heading));
    right_.push_back(right);
  }
  cells_.push_back(std::move(headings));
}

void TextTable::add(std::vector<std::string> cells) { cells_.push_back(std::move(cells)); }

std::string TextTable::str() const {
  std::vector<std::size_t> width(right_.size(), 0);
  for (const auto& row : cells_) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : cells_) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += right_[c] ? fmt::format("{:>{}}", row[c], width[c]) : fmt::format("{:<{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace pipeworks::sim
