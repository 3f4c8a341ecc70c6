// A small XML well-formedness checker for the SVGs the tests generate: one root element,
// balanced tags, quoted unique attributes, known entities only, no raw '<' or '&' in text.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pipeworks::viz::testing {

// One pass over the text; each method reads one construct at `i_` and returns its problem ("" if none).
class XmlScanner {
 public:
  explicit XmlScanner(std::string_view xml) : xml_(xml) {}

  std::string check() {
    if (xml_.substr(0, 5) == "<?xml") {
      const std::size_t end = xml_.find("?>");
      if (end == std::string_view::npos) return "unterminated XML declaration";
      i_ = end + 2;
    }
    while (i_ < xml_.size()) {
      if (std::string e = next(); !e.empty()) return e;
    }
    if (!open_.empty()) return "unclosed element <" + open_.back() + ">";
    if (roots_ != 1) return "no root element";
    return "";
  }

 private:
  std::string err(const std::string& what) const { return what + " at byte " + std::to_string(i_); }

  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == ':' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  }
  void skip_space() {
    while (i_ < xml_.size() && std::isspace(static_cast<unsigned char>(xml_[i_])) != 0) ++i_;
  }
  std::string read_name() {
    const std::size_t start = i_;
    while (i_ < xml_.size() && name_char(xml_[i_])) ++i_;
    return std::string(xml_.substr(start, i_ - start));
  }

  // An entity reference at xml_[i_] == '&': a known name or a character reference.
  bool entity_ok() {
    const std::size_t semi = xml_.find(';', i_);
    if (semi == std::string_view::npos || semi - i_ > 10) return false;
    const std::string_view ref = xml_.substr(i_ + 1, semi - i_ - 1);
    static const std::set<std::string_view> known = {"amp", "lt", "gt", "quot", "apos"};
    bool ok = known.count(ref) > 0;
    if (!ok && ref.size() > 1 && ref[0] == '#') {
      ok = true;
      for (std::size_t k = 1; k < ref.size(); ++k) ok = ok && std::isalnum(static_cast<unsigned char>(ref[k])) != 0;
    }
    i_ = semi + 1;
    return ok;
  }

  // Text, an entity, a comment, an end tag or a start tag.
  std::string next() {
    const char c = xml_[i_];
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') return err("control character");
    if (c == '&') return open_.empty() || !entity_ok() ? err("bad entity or text outside the root") : "";
    if (c != '<') {
      if (open_.empty() && std::isspace(static_cast<unsigned char>(c)) == 0) return err("text outside the root");
      if (c == '>') return err("raw '>' in text");
      ++i_;
      return "";
    }
    ++i_;
    if (xml_.substr(i_, 3) == "!--") {
      const std::size_t end = xml_.find("-->", i_);
      if (end == std::string_view::npos) return err("unterminated comment");
      i_ = end + 3;
      return "";
    }
    if (i_ < xml_.size() && xml_[i_] == '/') return end_tag();
    return start_tag();
  }

  std::string end_tag() {
    ++i_;
    const std::string name = read_name();
    skip_space();
    if (i_ >= xml_.size() || xml_[i_] != '>') return err("bad end tag");
    if (open_.empty() || open_.back() != name) return err("mismatched end tag </" + name + ">");
    open_.pop_back();
    ++i_;
    return "";
  }

  // <name attr="v" ...> or <name .../>, each attribute once.
  std::string start_tag() {
    const std::string name = read_name();
    if (name.empty()) return err("bad tag name");
    if (open_.empty() && ++roots_ > 1) return err("second root element");
    std::set<std::string> attrs;
    for (;;) {
      skip_space();
      if (i_ >= xml_.size()) return err("unterminated tag");
      if (xml_[i_] == '>') {
        open_.push_back(name);
        ++i_;
        return "";
      }
      if (xml_.substr(i_, 2) == "/>") {
        i_ += 2;
        return "";
      }
      const std::string attr = read_name();
      if (attr.empty() || !attrs.insert(attr).second) return err("bad or repeated attribute in <" + name + ">");
      if (std::string e = attribute_value(); !e.empty()) return e;
    }
  }

  std::string attribute_value() {
    skip_space();
    if (i_ >= xml_.size() || xml_[i_] != '=') return err("attribute without value");
    ++i_;
    skip_space();
    if (i_ >= xml_.size() || (xml_[i_] != '"' && xml_[i_] != '\'')) return err("unquoted attribute");
    const char quote = xml_[i_++];
    while (i_ < xml_.size() && xml_[i_] != quote) {
      if (xml_[i_] == '<') return err("'<' in attribute");
      if (xml_[i_] == '&') {
        if (!entity_ok()) return err("bad entity in attribute");
      } else {
        ++i_;
      }
    }
    if (i_ >= xml_.size()) return err("unterminated attribute");
    ++i_;
    return "";
  }

  std::string_view xml_;
  std::size_t i_ = 0;
  std::vector<std::string> open_;
  int roots_ = 0;
};

// Empty when `xml` is well formed, else the first problem and its byte offset.
inline std::string xml_error(std::string_view xml) { return XmlScanner(xml).check(); }

}  // namespace pipeworks::viz::testing
