// A small XML well-formedness checker for the SVGs the tests generate: one root element,
// balanced tags, quoted unique attributes, known entities only, no raw '<' or '&' in text.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pipeworks::viz::testing {

// Empty when `xml` is well formed, else the first problem and its byte offset.
inline std::string xml_error(std::string_view xml) {
  std::size_t i = 0;
  std::vector<std::string> open;
  int roots = 0;
  auto err = [&](const std::string& what) { return what + " at byte " + std::to_string(i); };
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == ':' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  auto skip_space = [&] {
    while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i])) != 0) ++i;
  };
  auto read_name = [&]() {
    const std::size_t start = i;
    while (i < xml.size() && name_char(xml[i])) ++i;
    return std::string(xml.substr(start, i - start));
  };
  // Checks an entity reference at xml[i] == '&'.
  auto entity_ok = [&]() {
    const std::size_t semi = xml.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) return false;
    const std::string_view ref = xml.substr(i + 1, semi - i - 1);
    static const std::set<std::string_view> known = {"amp", "lt", "gt", "quot", "apos"};
    bool ok = known.count(ref) > 0;
    if (!ok && ref.size() > 1 && ref[0] == '#') {
      ok = true;
      for (std::size_t k = 1; k < ref.size(); ++k) ok = ok && std::isalnum(static_cast<unsigned char>(ref[k])) != 0;
    }
    i = semi + 1;
    return ok;
  };
  if (xml.substr(0, 5) == "<?xml") {
    const std::size_t end = xml.find("?>");
    if (end == std::string_view::npos) return "unterminated XML declaration";
    i = end + 2;
  }
  while (i < xml.size()) {
    const char c = xml[i];
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') return err("control character");
    if (c == '&') {
      if (open.empty() || !entity_ok()) return err("bad entity or text outside the root");
      continue;
    }
    if (c != '<') {
      if (open.empty() && std::isspace(static_cast<unsigned char>(c)) == 0) return err("text outside the root");
      if (c == '>') return err("raw '>' in text");
      ++i;
      continue;
    }
    ++i;
    if (xml.substr(i, 3) == "!--") {
      const std::size_t end = xml.find("-->", i);
      if (end == std::string_view::npos) return err("unterminated comment");
      i = end + 3;
      continue;
    }
    if (i < xml.size() && xml[i] == '/') {
      ++i;
      const std::string name = read_name();
      skip_space();
      if (i >= xml.size() || xml[i] != '>') return err("bad end tag");
      if (open.empty() || open.back() != name) return err("mismatched end tag </" + name + ">");
      open.pop_back();
      ++i;
      continue;
    }
    const std::string name = read_name();
    if (name.empty()) return err("bad tag name");
    if (open.empty() && ++roots > 1) return err("second root element");
    std::set<std::string> attrs;
    for (;;) {
      skip_space();
      if (i >= xml.size()) return err("unterminated tag");
      if (xml[i] == '>') {
        open.push_back(name);
        ++i;
        break;
      }
      if (xml.substr(i, 2) == "/>") {
        i += 2;
        break;
      }
      const std::string attr = read_name();
      if (attr.empty() || !attrs.insert(attr).second) return err("bad or repeated attribute in <" + name + ">");
      skip_space();
      if (i >= xml.size() || xml[i] != '=') return err("attribute without value");
      ++i;
      skip_space();
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) return err("unquoted attribute");
      const char quote = xml[i++];
      while (i < xml.size() && xml[i] != quote) {
        if (xml[i] == '<') return err("'<' in attribute");
        if (xml[i] == '&') {
          if (!entity_ok()) return err("bad entity in attribute");
        } else {
          ++i;
        }
      }
      if (i >= xml.size()) return err("unterminated attribute");
      ++i;
    }
  }
  if (!open.empty()) return "unclosed element <" + open.back() + ">";
  if (roots != 1) return "no root element";
  return "";
}

}  // namespace pipeworks::viz::testing
