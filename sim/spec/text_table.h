// An aligned table for the terminal, shared by every report that prints one (sweep rows, the
// simulate summary): each column as wide as its widest cell, two spaces between columns, numbers
// right-aligned and words left-aligned, no trailing spaces.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipeworks::sim {

class TextTable {
 public:
  // (heading, right-aligned) per column; the headings are the first line.
  explicit TextTable(std::vector<std::pair<std::string, bool>> columns);
  // One line of cells, one per column.
  void add(std::vector<std::string> cells);
  std::string str() const;

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> cells_;  // the headings first
};

}  // namespace pipeworks::sim
