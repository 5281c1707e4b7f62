// Label elision for pf-dot (see names.h). A name is split into its scopes at the "::" that
// are outside brackets (operator tokens such as "operator<<" and "operator()" are stepped
// over, so their brackets do not count); each scope's outermost bracket groups, "<...>" and
// "(...)", are the elision candidates. The longest group of the enclosing scopes goes first,
// one at a time until the name fits, then the groups of the function's own scope, then the
// leftmost scopes (replaced by one "..."). Braces ("{lambda(int)#1}") are never elided.

#include "callgraph/names.h"

#include <algorithm>
#include <map>
#include <utility>

namespace pf {
namespace {

constexpr std::string_view kEllipsis = "...";

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The length of an operator's symbol at `i` when "operator" ends there ("()", "[]", "<<=",
/// "->", ...); 0 otherwise.
size_t OperatorSymbolLen(std::string_view s, size_t i) {
  constexpr std::string_view kWord = "operator";
  if (i < kWord.size() || s.substr(i - kWord.size(), kWord.size()) != kWord) return 0;
  if (i > kWord.size() && IsWordChar(s[i - kWord.size() - 1])) return 0;
  if (s.substr(i, 2) == "()" || s.substr(i, 2) == "[]") return 2;
  size_t n = 0;
  while (i + n < s.size() &&
         std::string_view("<>=!+-*/%^&|~,").find(s[i + n]) != std::string_view::npos) {
    ++n;
  }
  return n;
}

bool IsOpen(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
bool IsClose(char c) { return c == '>' || c == ')' || c == '}' || c == ']'; }

/// The scopes of `name`, split at the "::" outside brackets.
std::vector<std::string> SplitScopes(std::string_view name) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (size_t n = OperatorSymbolLen(name, i)) {
      i += n - 1;
      continue;
    }
    char c = name[i];
    if (IsOpen(c)) {
      ++depth;
    } else if (IsClose(c)) {
      depth = std::max(0, depth - 1);
    } else if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      out.emplace_back(name.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  out.emplace_back(name.substr(start));
  return out;
}

/// An outermost "<...>" or "(...)" group of a scope: the bytes between its brackets.
struct Group {
  size_t begin = 0, end = 0;  // content [begin, end)
  size_t size() const { return end - begin; }
};

/// The largest group of `scope` worth eliding (its content longer than "..."), if any.
bool LargestGroup(std::string_view scope, Group* best) {
  bool found = false;
  int depth = 0;
  size_t open = 0;
  char opener = 0;
  for (size_t i = 0; i < scope.size(); ++i) {
    if (size_t n = OperatorSymbolLen(scope, i)) {
      i += n - 1;
      continue;
    }
    char c = scope[i];
    if (IsOpen(c)) {
      if (depth++ == 0) {
        open = i;
        opener = c;
      }
    } else if (IsClose(c) && depth > 0 && --depth == 0 && opener != '{' && opener != '[') {
      Group g{open + 1, i};
      std::string_view content = scope.substr(g.begin, g.size());
      if (content != kEllipsis && content.size() > kEllipsis.size() &&
          content != "anonymous namespace" && (!found || g.size() > best->size())) {
        *best = g;
        found = true;
      }
    }
  }
  return found;
}

size_t JoinedSize(const std::vector<std::string>& scopes) {
  size_t n = 0;
  for (const std::string& s : scopes) n += s.size();
  return n + 2 * (scopes.size() - 1);
}

std::string Join(const std::vector<std::string>& scopes) {
  std::string out;
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (i) out += "::";
    out += scopes[i];
  }
  return out;
}

/// Elides the largest group among scopes [from, to); false when none is left.
bool ElideOneGroup(std::vector<std::string>* scopes, size_t from, size_t to) {
  size_t which = to;
  Group best;
  for (size_t i = from; i < to; ++i) {
    Group g;
    if (LargestGroup((*scopes)[i], &g) && (which == to || g.size() > best.size())) {
      best = g;
      which = i;
    }
  }
  if (which == to) return false;
  (*scopes)[which].replace(best.begin, best.size(), kEllipsis);
  return true;
}

/// Cuts the middle of `s` to at most `max` bytes (at UTF-8 character boundaries).
std::string CutMiddle(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t keep = max > kEllipsis.size() ? max - kEllipsis.size() : 0;
  size_t head = keep / 3, tail = keep - head;
  auto continuation = [&](size_t i) {
    return i < s.size() && (static_cast<unsigned char>(s[i]) >> 6) == 2;
  };
  while (head > 0 && continuation(head)) --head;
  size_t tail_start = s.size() - tail;
  while (tail_start < s.size() && continuation(tail_start)) ++tail_start;
  return std::string(s.substr(0, head)) + std::string(kEllipsis) +
         std::string(s.substr(tail_start));
}

}  // namespace

std::string ElideName(std::string_view name, size_t max) {
  if (name.size() <= max) return std::string(name);
  std::vector<std::string> scopes = SplitScopes(name);
  const size_t own = scopes.size() - 1;
  // The enclosing scopes' template arguments (and parameters), then the function's own.
  while (JoinedSize(scopes) > max && ElideOneGroup(&scopes, 0, own)) {
  }
  while (JoinedSize(scopes) > max && ElideOneGroup(&scopes, own, own + 1)) {
  }
  // Then the leftmost scopes, into one "...".
  while (JoinedSize(scopes) > max && scopes.size() > 1 &&
         !(scopes.size() == 2 && scopes[0] == kEllipsis)) {
    if (scopes[0] == kEllipsis) {
      scopes.erase(scopes.begin() + 1);
    } else {
      scopes[0] = std::string(kEllipsis);
    }
  }
  return CutMiddle(Join(scopes), max);
}

std::vector<std::string> DistinctLabels(const std::vector<std::string>& names,
                                        const std::vector<std::string>& groups, size_t max) {
  std::vector<std::string> labels(names.size());
  for (size_t i = 0; i < names.size(); ++i) labels[i] = ElideName(names[i], max);
  auto collisions = [&] {
    std::map<std::pair<std::string_view, std::string_view>, std::vector<size_t>> seen;
    for (size_t i = 0; i < names.size(); ++i) seen[{groups[i], labels[i]}].push_back(i);
    std::vector<std::vector<size_t>> out;
    for (auto& [key, members] : seen) {
      if (members.size() > 1) out.push_back(std::move(members));
    }
    return out;
  };
  // Colliding labels are elided less when that tells them apart (up to 8 * max) ...
  for (const std::vector<size_t>& members : collisions()) {
    for (size_t budget = 2 * max; budget <= 8 * max; budget *= 2) {
      std::vector<std::string> wider;
      for (size_t i : members) wider.push_back(ElideName(names[i], budget));
      std::vector<std::string> sorted = wider;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) {
        for (size_t k = 0; k < members.size(); ++k) labels[members[k]] = std::move(wider[k]);
        break;
      }
    }
  }
  // ... and numbered otherwise.
  for (const std::vector<size_t>& members : collisions()) {
    for (size_t k = 0; k < members.size(); ++k) {
      labels[members[k]] +=
          " [" + std::to_string(k + 1) + "/" + std::to_string(members.size()) + "]";
    }
  }
  return labels;
}

}  // namespace pf
