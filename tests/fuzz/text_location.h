// Reading "LINE:COL" locations back into the text they point at, so that harnesses can check
// that a located message or diagnostic points inside its input (and at the right token).
// Lines end at "\n" or "\r\n", and with `lone_cr` also at a lone "\r" (the CSV reader ends a row
// there, like Python's csv); columns count bytes from 1; a UTF-8 byte order mark before line 1
// is not a column.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pipeworks::fuzz {

// Byte offset of (line, column); a column may point one past the line's last byte (the end of
// the line). nullopt when the location lies outside the text.
std::optional<std::size_t> offset_of(std::string_view text, long line, long column, bool lone_cr);

// The token starting at `offset`: bytes up to the next ',', '"', blank, line end, ';' or ')' (a
// composite's sub-action ends there) or the end.
std::string_view token_at(std::string_view text, std::size_t offset);

// "<source>:<line>:<col>: ..." -> (line, col); nullopt when `message` has no such prefix.
struct LineColumn {
  long line = 0;
  long column = 0;
};
std::optional<LineColumn> leading_line_column(std::string_view message, std::string_view source);

}  // namespace pipeworks::fuzz
