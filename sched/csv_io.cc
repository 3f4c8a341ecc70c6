// Reading and writing torch.distributed.pipelining's CSV schedule layout (see csv_io.h).
#include "sched/csv_io.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "sched/cells.h"
#include "sched/limits.h"

namespace pipeworks::sched {
namespace {

// A cell's text and where its bytes lie in the source: byte k of `text` lies at the last mark at
// or before k, plus its distance from that mark in columns. A mark starts the cell, each line
// inside a quoted cell, and each byte after a '""' escape (two source bytes for one text byte).
struct Cell {
  struct Mark {
    std::size_t offset;
    TextPosition at;
  };
  std::string text;
  std::vector<Mark> marks;

  TextPosition position_of(std::size_t offset) const {
    auto it = std::upper_bound(marks.begin(), marks.end(), offset,
                               [](std::size_t k, const Mark& m) { return k < m.offset; });
    const Mark& m = *std::prev(it);
    return {m.at.line, m.at.column + static_cast<int>(offset - m.offset)};
  }
};

struct Row {
  int line = 0;
  std::vector<Cell> cells;
};

Error located(std::string_view source, int line, int column, std::string_view message) {
  return Error{fmt::format("{}:{}:{}: error: {}", source, line, column, message)};
}

// Where split_rows is in the text: the byte and its line and column (1-based).
struct CsvCursor {
  std::string_view text;
  std::size_t i = 0;
  int line = 1;
  int column = 1;
  bool at(char c) const { return i < text.size() && text[i] == c; }
  bool at_cell_end() const { return i >= text.size() || text[i] == ',' || text[i] == '\n' || text[i] == '\r'; }
};

// A quoted cell from its opening '"' to what follows its closing one, which must end the cell;
// '""' is a quote inside it. Each line end inside it, and each '""', marks where the cell's text
// continues in the file.
Status read_quoted_cell(CsvCursor& at, Cell& cell, std::string_view source) {
  const int quote_line = at.line;
  const int quote_column = at.column;
  ++at.i, ++at.column;
  cell.marks.front().at = {at.line, at.column};
  for (;;) {
    if (at.i >= at.text.size()) return located(source, quote_line, quote_column, "unterminated quoted cell");
    const char c = at.text[at.i];
    if (c == '"' && at.i + 1 < at.text.size() && at.text[at.i + 1] == '"') {
      cell.text += '"';
      at.i += 2, at.column += 2;
      cell.marks.push_back({cell.text.size(), {at.line, at.column}});
    } else if (c == '"') {
      ++at.i, ++at.column;
      break;
    } else {
      cell.text += c;
      ++at.i;
      // Line ends count as outside quotes: "\r\n", "\n" or a lone "\r".
      if (c == '\n' || (c == '\r' && !at.at('\n'))) {
        ++at.line, at.column = 1;
        cell.marks.push_back({cell.text.size(), {at.line, at.column}});
      } else {
        ++at.column;
      }
    }
  }
  if (!at.at_cell_end()) return located(source, at.line, at.column, "unexpected text after a quoted cell");
  return Ok{};
}

// Python csv.reader's default dialect: ',' separates, '"' quotes ('""' is a quote inside a
// quoted cell), "\n" or "\r\n" ends a row, and a final line ending starts no new row.
Result<std::vector<Row>> split_rows(std::string_view text, std::string_view source) {
  std::vector<Row> rows;
  CsvCursor at{text};
  if (text.substr(0, 3) == "\xEF\xBB\xBF") at.i = 3;  // UTF-8 byte order mark
  while (at.i < text.size()) {
    Row row{at.line, {}};
    for (bool end_of_row = false; !end_of_row;) {
      Cell cell{{}, {{0, {at.line, at.column}}}};
      if (at.at('"')) {
        if (Status read = read_quoted_cell(at, cell, source); !read) return read.error();
      } else {
        for (; !at.at_cell_end(); ++at.i, ++at.column) cell.text += text[at.i];
      }
      row.cells.push_back(std::move(cell));
      if (at.at(',')) {
        ++at.i, ++at.column;
        continue;
      }
      if (at.at('\r')) ++at.i;
      if (at.at('\n')) ++at.i;
      ++at.line, at.column = 1;
      end_of_row = true;
    }
    // csv.reader yields [] for an empty line: a rank with an empty program.
    if (row.cells.size() == 1 && row.cells.front().text.empty()) row.cells.clear();
    rows.push_back(std::move(row));
  }
  return rows;
}

// The K x M an action implies stays within the limits; else an error at the action's token.
Status check_size(const Action& action, std::string_view token, int& max_stage, int& max_microbatch,
                  std::string_view source, TextPosition at) {
  if (action.stage >= kMaxStages) {
    return located(source, at.line, at.column,
                   fmt::format("stage {} in '{}' is beyond the largest supported schedule ({} stages)", action.stage,
                               token, kMaxStages));
  }
  const std::int64_t stages = std::max<std::int64_t>(max_stage, action.stage) + 1;
  const std::int64_t microbatches = std::max<std::int64_t>(max_microbatch, action.microbatch) + 1;
  if (stages * microbatches > kMaxScheduleCells) {
    return located(source, at.line, at.column,
                   fmt::format("'{}' implies at least {} stages x {} micro-batches, beyond the largest supported "
                               "schedule ({} cells)",
                               token, stages, microbatches, kMaxScheduleCells));
  }
  max_stage = std::max(max_stage, action.stage);
  max_microbatch = std::max(max_microbatch, action.microbatch);
  return Ok{};
}

// Each stage goes to the row holding most of its actions (the earliest such row on a tie), so
// that a stray action is what validation flags as the stage's second device.
void infer_placement(Schedule& schedule) {
  schedule.placement.assign(static_cast<std::size_t>(schedule.num_stages), -1);
  std::vector<std::size_t> best(static_cast<std::size_t>(schedule.num_stages), 0);
  std::unordered_map<int, std::size_t> on_row;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    on_row.clear();
    for (const Action& a : schedule.programs[d]) ++on_row[a.stage];
    for (const auto& [stage, count] : on_row) {
      const auto s = static_cast<std::size_t>(stage);
      if (count > best[s]) best[s] = count, schedule.placement[s] = static_cast<int>(d);
    }
  }
}

}  // namespace

Result<LoadedSchedule> parse_csv(std::string_view text, std::string_view source_name) {
  if (text.size() > kMaxCsvBytes) {
    return Error{fmt::format("{}: error: file is {} bytes; the largest CSV schedule read is {} bytes", source_name,
                             text.size(), kMaxCsvBytes)};
  }
  auto rows = split_rows(text, source_name);
  if (!rows) return rows.error();

  LoadedSchedule loaded;
  loaded.source_name = std::string(source_name);
  loaded.format = ScheduleFormat::kCsv;
  loaded.placement_inferred = true;
  Schedule& schedule = loaded.schedule;
  schedule.programs.resize(rows->size());
  loaded.cells.resize(rows->size());
  int max_stage = -1;
  int max_microbatch = -1;
  for (std::size_t d = 0; d < rows->size(); ++d) {
    const Row& row = (*rows)[d];
    loaded.row_lines.push_back(row.line);
    for (const Cell& cell : row.cells) {
      const std::size_t first = cell.text.find_first_not_of(" \t");
      if (first == std::string::npos) continue;  // idle slot
      const std::size_t last = cell.text.find_last_not_of(" \t");
      const std::string_view token = std::string_view(cell.text).substr(first, last - first + 1);
      auto parsed = parse_cell(token);
      if (!parsed) {
        const TextPosition at = cell.position_of(first + parsed.error().column.value_or(0));
        return located(source_name, at.line, at.column, parsed.error().message);
      }
      if (parsed->size == 2) {
        schedule.composites.push_back({static_cast<int>(d), static_cast<int>(schedule.programs[d].size())});
      }
      for (int i = 0; i < parsed->size; ++i) {
        const Action& action = parsed->actions[static_cast<std::size_t>(i)];
        const TextPosition here = cell.position_of(first + parsed->columns[static_cast<std::size_t>(i)]);
        if (auto size = check_size(action, token, max_stage, max_microbatch, source_name, here); !size) {
          return size.error();
        }
        schedule.programs[d].push_back(action);
        loaded.cells[d].push_back(here);
      }
    }
  }
  schedule.num_stages = max_stage + 1;
  schedule.num_microbatches = max_microbatch + 1;
  infer_placement(schedule);
  return loaded;
}

std::string to_csv(const Schedule& schedule) {
  std::string out;
  out.reserve(schedule.num_actions() * 8);
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const std::vector<std::string> cells = program_cells(schedule.programs[d], parts[d]);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += ',';
      out += cells[c];
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace pipeworks::sched
