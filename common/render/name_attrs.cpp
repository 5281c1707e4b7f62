// Reads --nameattr files (see name_attrs.h).
#include "render/name_attrs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "io/input.h"
#include "io/line_reader.h"

namespace pf {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ValidName(std::string_view n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == ':';
  });
}

// Why an attribute is left out, or "" when it is kept.
std::string Unsafe(std::string_view name, std::string_view value) {
  if (!ValidName(name)) return "bad attribute name";
  std::string n = Lower(name);
  if (n.rfind("on", 0) == 0) return "event handler attribute";
  if (n == "href" || (n.size() > 5 && n.substr(n.size() - 5) == ":href")) {
    std::string v;
    for (char c : value) {
      if (static_cast<unsigned char>(c) > ' ') v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (v.rfind("javascript:", 0) == 0 || v.rfind("vbscript:", 0) == 0) return "script link";
  }
  return "";
}

// `a="1" b='2' c=3` into pairs; false when it does not parse.
bool ParseExtra(std::string_view s, std::vector<std::pair<std::string, std::string>>* out) {
  auto skip_space = [&] {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) s.remove_prefix(1);
  };
  for (skip_space(); !s.empty(); skip_space()) {
    size_t eq = s.find('=');
    if (eq == std::string_view::npos) return false;
    std::string_view name = s.substr(0, eq);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
    s.remove_prefix(eq + 1);
    skip_space();
    std::string_view value;
    if (!s.empty() && (s[0] == '"' || s[0] == '\'')) {
      size_t end = s.find(s[0], 1);
      if (end == std::string_view::npos) return false;
      value = s.substr(1, end - 1);
      s.remove_prefix(end + 1);
    } else {
      size_t end = 0;
      while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
      value = s.substr(0, end);
      s.remove_prefix(end);
    }
    out->emplace_back(std::string(name), std::string(value));
  }
  return true;
}

// Sets name=value in `attrs`, replacing an earlier value.
void Set(std::vector<std::pair<std::string, std::string>>* attrs, std::string name,
         std::string value) {
  for (auto& [n, v] : *attrs) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  attrs->emplace_back(std::move(name), std::move(value));
}

}  // namespace

std::unordered_map<std::string, FrameAttrs> ReadNameAttrs(const std::string& path,
                                                          std::vector<std::string>* warnings) {
  std::unique_ptr<ByteSource> src = OpenInput(path);
  std::string text;
  for (std::string_view c = src->Next(); !c.empty(); c = src->Next()) text.append(c);
  std::unordered_map<std::string, FrameAttrs> out;
  std::map<std::string, uint64_t> ignored;  // why -> how many, for one warning each
  LineSplitter lines(text);
  std::string_view line;
  uint64_t line_no = 0;
  while (lines.Next(&line)) {
    ++line_no;
    if (line.empty()) continue;
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      throw Error(Where(path, line_no), "not FUNCTION<tab>KEY=VALUE... (flamegraph.pl's --nameattr format)");
    }
    FrameAttrs& fa = out[std::string(line.substr(0, tab))];
    std::string_view rest = line.substr(tab + 1);
    std::string href, target;
    std::vector<std::pair<std::string, std::string>> a_extra, g_extra;
    for (;;) {
      size_t next = rest.find('\t');
      std::string_view pair = rest.substr(0, next);
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        if (!pair.empty()) {
          throw Error(Where(path, line_no), "'" + std::string(pair) + "' is not KEY=VALUE");
        }
      } else {
        std::string key(pair.substr(0, eq));
        std::string value(pair.substr(eq + 1));
        if (key == "title") {
          fa.has_title = true;
          fa.title = value;
        } else if (key == "id" || key == "class") {
          Set(&fa.group_attrs, key, value);
        } else if (key == "href") {
          href = value;
        } else if (key == "target") {
          target = value;
        } else if (key == "g_extra" || key == "a_extra") {
          if (!ParseExtra(value, key == "g_extra" ? &g_extra : &a_extra)) {
            ++ignored[key + " not written NAME=\"VALUE\" ..."];
          }
        } else {
          ++ignored["unknown key '" + key + "'"];
        }
      }
      if (next == std::string_view::npos) break;
      rest.remove_prefix(next + 1);
    }
    for (auto& [n, v] : g_extra) Set(&fa.group_attrs, n, v);
    if (!href.empty()) {
      fa.link = true;
      Set(&fa.link_attrs, "xlink:href", href);
      Set(&fa.link_attrs, "target", target.empty() ? "_top" : target);
    }
    for (auto& [n, v] : a_extra) Set(&fa.link_attrs, n, v);
    for (auto* attrs : {&fa.link_attrs, &fa.group_attrs}) {
      std::erase_if(*attrs, [&](const std::pair<std::string, std::string>& a) {
        std::string why = Unsafe(a.first, a.second);
        if (!why.empty()) ++ignored[why + " '" + a.first + "'"];
        return !why.empty();
      });
    }
    if (fa.link && std::none_of(fa.link_attrs.begin(), fa.link_attrs.end(),
                                [](const auto& a) { return a.first == "xlink:href"; })) {
      fa.link = false;  // its href was left out: no link
    }
  }
  if (warnings) {
    for (const auto& [why, n] : ignored) {
      warnings->push_back(path + ": ignored " + why + " (" + std::to_string(n) +
                          (n == 1 ? " time)" : " times)"));
    }
  }
  return out;
}

}  // namespace pf
