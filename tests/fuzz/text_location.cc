// Locations in text (text_location.h).
#include "tests/fuzz/text_location.h"

#include <charconv>

namespace pipeworks::fuzz {

std::optional<std::size_t> offset_of(std::string_view text, long line, long column, bool lone_cr) {
  if (line < 1 || column < 1) return std::nullopt;
  // The length of the line ending at i (0: none there).
  const auto line_end = [&](std::size_t i) -> std::size_t {
    if (text[i] == '\n') return 1;
    if (text.substr(i, 2) == "\r\n") return 2;
    return lone_cr && text[i] == '\r' ? 1 : 0;
  };
  std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  for (long l = 1; l < line; ++l) {
    while (i < text.size() && line_end(i) == 0) ++i;
    if (i >= text.size()) return std::nullopt;
    i += line_end(i);
  }
  std::size_t end = i;
  while (end < text.size() && line_end(end) == 0) ++end;
  const std::size_t at = i + static_cast<std::size_t>(column - 1);
  if (at > end) return std::nullopt;
  return at;
}

std::string_view token_at(std::string_view text, std::size_t offset) {
  constexpr std::string_view kStop = ",\" \t\r\n;)";  // ';' and ')' end a composite's sub-action
  std::size_t end = offset;
  while (end < text.size() && kStop.find(text[end]) == std::string_view::npos) ++end;
  return text.substr(offset, end - offset);
}

std::optional<LineColumn> leading_line_column(std::string_view message, std::string_view source) {
  if (message.substr(0, source.size()) != source || message.substr(source.size(), 1) != ":") return std::nullopt;
  const char* p = message.data() + source.size() + 1;
  const char* end = message.data() + message.size();
  LineColumn lc;
  auto r = std::from_chars(p, end, lc.line);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ':') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, lc.column);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ':') return std::nullopt;
  return lc;
}

}  // namespace pipeworks::fuzz
