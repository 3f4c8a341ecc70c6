// csv_line (see field_text.h).
#include "sim/spec/field_text.h"

namespace pipeworks::sim {
namespace {

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += ',';
    line += csv_cell(cells[c]);
  }
  return line + "\n";
}

}  // namespace pipeworks::sim
