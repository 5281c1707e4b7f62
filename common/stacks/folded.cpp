// Reading and writing folded stacks (folded.h). A line is parsed without allocation: the count
// (or two) is read from the right, since frame names may contain spaces, and the frames are
// interned and added to the tree as one stack. The writer walks the tree depth first and orders
// each node's children so that the lines come out bytewise sorted without building them as
// strings (see "Writing folded stacks in bytewise order" in bench/README.md).

#include "stacks/folded.h"

#include <algorithm>
#include <charconv>

#include "base/error.h"


namespace pf {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Parses the last "COUNT" of `s` (after trailing blanks are gone): digits with an optional
// fraction, preceded by a blank. On success, shortens `s` to what precedes that blank.
bool TakeCount(std::string_view* s, uint64_t* value, uint64_t* frac, uint8_t* frac_digits,
               bool* cut, bool* too_large) {
  std::string_view t = *s;
  size_t end = t.size();
  size_t p = end;
  while (p > 0 && (t[p - 1] >= '0' && t[p - 1] <= '9')) --p;
  *frac = 0;
  *frac_digits = 0;
  if (p > 0 && t[p - 1] == '.') {  // "12.5" or "12."
    size_t frac_end = end;
    while (frac_end > p && t[frac_end - 1] == '0') --frac_end;  // "12.500" is "12.5"
    size_t kept = std::min<size_t>(frac_end - p, kMaxDecimals);
    if (kept < frac_end - p) *cut = true;
    for (size_t i = p; i < p + kept; ++i) *frac = *frac * 10 + static_cast<uint64_t>(t[i] - '0');
    *frac_digits = static_cast<uint8_t>(kept);
    end = p - 1;
    size_t q = end;
    while (q > 0 && (t[q - 1] >= '0' && t[q - 1] <= '9')) --q;
    if (q == end) return false;
    p = q;
  }
  if (p == end || p == 0 || !IsBlank(t[p - 1])) return false;
  auto r = std::from_chars(t.data() + p, t.data() + end, *value);
  if (r.ec == std::errc::result_out_of_range) {
    *value = UINT64_MAX;
    *too_large = true;
  } else if (r.ec != std::errc()) {
    return false;
  }
  // Exactly one blank separates the count, as in flamegraph.pl's /^(.*)\s+?(\d+)$/: more
  // blanks belong to the last frame's name (a frame may be " ").
  *s = t.substr(0, p - 1);
  return true;
}

}  // namespace

bool IsFoldedIgnorable(std::string_view line) {
  for (char c : line) {
    if (c == '#') return true;
    if (!IsBlank(c)) return false;
  }
  return true;
}

uint64_t FoldedLine::Scaled(int i, int decimals) const {
  if (decimals == 0) return counts[i];
  uint64_t whole = MulSat(counts[i], Pow10(decimals));
  return AddSat(whole, fracs[i] * Pow10(decimals - frac_digits[i]));
}

bool ParseFoldedLine(std::string_view line, int want_counts, FoldedLine* out) {
  while (!line.empty() && (IsBlank(line.back()) || line.back() == '\r')) line.remove_suffix(1);
  out->cut = false;
  out->too_large = false;
  uint64_t last = 0, last_frac = 0;
  uint8_t last_digits = 0;
  if (!TakeCount(&line, &last, &last_frac, &last_digits, &out->cut, &out->too_large)) {
    return false;
  }
  std::string_view rest = line;
  uint64_t first = 0, first_frac = 0;
  uint8_t first_digits = 0;
  bool cut2 = false, too_large2 = false;
  if (want_counts != 1 &&
      TakeCount(&rest, &first, &first_frac, &first_digits, &cut2, &too_large2) && !rest.empty()) {
    out->too_large = out->too_large || too_large2;
    out->counts[0] = first;
    out->fracs[0] = first_frac;
    out->frac_digits[0] = first_digits;
    out->counts[1] = last;
    out->fracs[1] = last_frac;
    out->frac_digits[1] = last_digits;
    out->ncounts = 2;
    out->cut = out->cut || cut2;
    line = rest;
  } else {
    if (want_counts == 2) return false;
    out->counts[0] = last;
    out->fracs[0] = last_frac;
    out->frac_digits[0] = last_digits;
    out->frac_digits[1] = 0;
    out->ncounts = 1;
  }
  out->fractional = out->frac_digits[0] || out->frac_digits[1];
  if (line.empty()) return false;
  out->stack = line;
  return true;
}

bool FoldedLines::Next() {
  while (lines_.Next(&line_)) {
    ++next_line_;
    if (IsFoldedIgnorable(line_)) {
      if (line_.starts_with(kPfCommentPrefix)) {
        kind_ = kPfComment;
        return true;
      }
      continue;
    }
    bool ok = line_.size() <= BlockReader::kMaxLineBytes &&
              ParseFoldedLine(line_, want_counts_, &fl_);
    kind_ = ok ? kStack : kMalformed;
    return true;
  }
  return false;
}

std::string PfUnitLine(WeightUnit unit) {
  if (unit == WeightUnit::kUnspecified || unit == WeightUnit::kSamples) return "";
  return std::string(kPfUnitComment) + std::string(UnitKeyword(unit)) + "\n";
}

bool ParsePfUnitLine(std::string_view line, WeightUnit* unit) {
  if (!line.starts_with(kPfUnitComment)) return false;
  line.remove_prefix(kPfUnitComment.size());
  while (!line.empty() && IsBlank(line.back())) line.remove_suffix(1);
  while (!line.empty() && IsBlank(line.front())) line.remove_prefix(1);
  if (!ParseUnitKeyword(line, unit)) *unit = WeightUnit::kUnspecified;
  return true;
}

bool FoldedUnit::Take(std::string_view line, const std::string& file, uint64_t line_number) {
  WeightUnit unit;
  if (!ParsePfUnitLine(line, &unit)) return false;
  // A unit pf does not know, or one that disagrees with an earlier line (folded files
  // concatenated): the counts are then of no one unit.
  bool disagrees = unit != WeightUnit::kUnspecified &&
                   (disagree_ || (unit_ != WeightUnit::kUnspecified && unit != unit_));
  if ((unit == WeightUnit::kUnspecified || disagrees) && warning_.empty()) {
    warning_ = (file.empty() ? "line " + std::to_string(line_number) : Where(file, line_number)) +
               ": `" + std::string(line) +
               (disagrees ? "` disagrees with the unit line before it"
                          : "` names no unit pf knows") +
               "; the counts are read as samples";
  }
  if (disagrees) {
    disagree_ = true;
    unit_ = WeightUnit::kUnspecified;
  } else if (unit != WeightUnit::kUnspecified && !disagree_) {
    unit_ = unit;
  }
  return true;
}

StackTree TreeForFolded(int counts) {
  return counts == 2 ? StackTree::Differential() : StackTree();
}

int FoldedColumns(std::string_view data) {
  FoldedLines lines(data, 0);
  while (lines.Next()) {
    if (lines.kind() == FoldedLines::kStack) return lines.folded().ncounts;
  }
  return 0;
}

void FoldedReader::AddBlock(std::string_view data, uint64_t first_line, const std::string& file) {
  FoldedLines lines(data, tree_.differential() ? 2 : 1, first_line);
  while (lines.Next()) {
    if (lines.kind() == FoldedLines::kPfComment) {
      if (!unit_.Take(lines.line(), file, lines.line_number()) && pf_comments_.size() < 16) {
        pf_comments_.emplace_back(lines.line());
      }
      continue;
    }
    if (lines.kind() == FoldedLines::kMalformed) {
      malformed_.Add(file, lines.line_number());
      continue;
    }
    const FoldedLine& fl = lines.folded();
    int decimals = tree_.decimals();
    if (fl.fractional) {
      ++fractional_;
      if (fl.decimals() > decimals) tree_.SetDecimals(decimals = fl.decimals());
    }
    if (fl.cut) ++cut_;
    if (fl.Saturates(decimals)) tree_.NoteSaturated();
    frames_.clear();
    ForEachFrame(fl.stack, [&](std::string_view f) { frames_.push_back(tree_.names().Intern(f)); });
    NodeId leaf = tree_.AddStack(frames_, fl.Scaled(0, decimals), 0);
    if (fl.ncounts == 2) tree_.AddSelf(leaf, fl.Scaled(1, decimals), 1);
    ++stacks_;
  }
}

namespace {

// One entry to emit under a node: the child's own line (key "name"), or its subtree
// (key "name;"). Sorting by those keys gives exactly the bytewise order of the full lines,
// because a frame name never contains ';'.
struct Item {
  NodeId node;
  bool subtree;
};

}  // namespace

void WriteFolded(const StackTree& tree, BufferedWriter& out) {
  // A tree of several values per stack is written by its default one (OneValueView), read
  // in place: OneValue's copy of it would have the same nodes.
  const bool one_view = tree.columns() > 1 && !tree.differential();
  const int first_column = one_view ? tree.default_column() : 0;
  const int end_column = one_view ? first_column + 1 : tree.columns();
  auto weighs = [&](NodeId n) {
    for (int c = first_column; c < end_column; ++c) {
      if (tree.self(n, c)) return true;
    }
    return false;
  };
  // The unit's line, before the first stack (an empty result stays empty).
  std::string unit = PfUnitLine(tree.unit(first_column));
  // Children lists in CSR form, in id order (node n's: children[first[n]..first[n + 1])).
  const size_t size = tree.size();
  std::vector<uint32_t> first(size + 2, 0);
  for (NodeId n{1}; n.index() < size; ++n) ++first[tree.parent(n).index() + 2];
  for (size_t i = 2; i < first.size(); ++i) first[i] += first[i - 1];
  std::vector<NodeId> children(size > 0 ? size - 1 : 0);
  for (NodeId n{1}; n.index() < size; ++n) children[first[tree.parent(n).index() + 1]++] = n;
  auto has_children = [&](NodeId n) { return first[n.index() + 1] > first[n.index()]; };
  auto key_less = [&](const Item& a, const Item& b) {
    std::string_view na = tree.name(a.node), nb = tree.name(b.node);
    size_t n = std::min(na.size(), nb.size());
    int c = na.substr(0, n).compare(nb.substr(0, n));
    if (c != 0) return c < 0;
    // One name is a prefix of the other: continue with ';' (subtree) or end (own line).
    auto at = [](std::string_view s, size_t i, bool sub) -> int {
      if (i < s.size()) return static_cast<unsigned char>(s[i]);
      if (i == s.size() && sub) return ';';
      return -1;
    };
    for (size_t i = n;; ++i) {
      int x = at(na, i, a.subtree), y = at(nb, i, b.subtree);
      if (x != y) return x < y;
      if (x == -1) return false;
    }
  };
  // The items of every level being written, in one vector: a level's are appended when it
  // is entered and dropped when it is done. Siblings have distinct names, so the order is
  // total and a plain sort gives the lines' bytewise order; a node with one child needs
  // none (its own line comes before its subtree's lines).
  std::vector<Item> items;
  auto push_items = [&](NodeId n) {
    const size_t begin = items.size();
    for (uint32_t i = first[n.index()]; i < first[n.index() + 1]; ++i) {
      NodeId c = children[i];
      if (weighs(c)) items.push_back({c, false});
      if (has_children(c)) items.push_back({c, true});
    }
    if (first[n.index() + 1] - first[n.index()] > 1) {
      std::sort(items.begin() + begin, items.end(), key_less);
    }
  };
  struct Level {
    size_t begin, next, end;  // its items, items[begin..end); the next to write
    size_t base_len;          // the path's length above it
    bool root;
  };
  std::string path;
  std::vector<Level> stack;
  push_items(StackTree::kRoot);
  stack.push_back({0, 0, items.size(), 0, true});
  while (!stack.empty()) {
    Level& level = stack.back();
    if (level.next == level.end) {
      items.resize(level.begin);  // the last level's are the last items
      stack.pop_back();
      continue;
    }
    const Item it = items[level.next++];
    path.resize(level.base_len);
    if (!level.root) path += ';';
    path += tree.name(it.node);
    if (!it.subtree) {
      if (!unit.empty()) {
        out.Append(unit);
        unit.clear();
      }
      out.Append(path);
      for (int c = first_column; c < end_column; ++c) {
        out.Append(' ');
        if (tree.decimals() == 0) {
          out.AppendU64(tree.self(it.node, c));
        } else {
          out.Append(FormatWeight(tree.self(it.node, c), tree.decimals()));
        }
      }
      out.Append('\n');
    } else {
      const size_t begin = items.size();
      push_items(it.node);
      stack.push_back({begin, begin, items.size(), path.size(), false});
    }
  }
}

}  // namespace pf
