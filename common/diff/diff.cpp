// pf-diff (diff.h). Both inputs arrive as stack trees (app/diff_files.cpp collapses them, so
// pf-diff reads whatever pf-collapse reads), optionally with hex addresses stripped, and are
// put into one tree with two weight columns; --normalize scales BEFORE's column to AFTER's total. The result is written as
// sorted `stack BEFORE AFTER` lines, or, with --report, as the functions whose self and total
// weights changed most, each function counted once per stack so recursion is not counted twice.

#include "diff/diff.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "io/input.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

namespace pf {

namespace {

// difffolded.pl's -s: every "0x" followed by hex digits becomes "0x...".
std::string StripHex(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && s[i] == '0' && s[i + 1] == 'x' &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      size_t j = i + 2;
      while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j]))) ++j;
      out += "0x...";
      i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Adds every stack of `in` to column `col` of `out` (renaming frames when asked); `out` has
// at least as many decimals as `in`.
void AddColumn(const StackTree& in, int col, bool strip_hex, StackTree* out) {
  const uint64_t scale = Pow10(out->decimals() - in.decimals());
  out->NoteSaturated(in.saturated());
  std::vector<StrId> map(in.names().size());
  std::vector<bool> mapped(in.names().size(), false);
  std::vector<StrId> frames;
  in.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    frames.clear();
    for (NodeId p : path) {
      uint32_t f = in.frame(p).value;
      if (!mapped[f]) {
        std::string_view name = in.names().Name(StrId{f});
        map[f] = out->names().Intern(strip_hex ? std::string_view(StripHex(name)) : name);
        mapped[f] = true;
      }
      frames.push_back(map[f]);
    }
    out->AddSelf(out->AddStack(frames, 0, col), MulSat(in.self(n), scale), col);
  });
}

// The lines of a mapped folded file, one stack at a time, for the sorted merge below.
class SortedFolded {
 public:
  explicit SortedFolded(std::string_view data) : data_(data), lines_(data, 1) {}

  /// Advances to the next stack; false at the end or at a line the merge cannot take (a
  /// malformed, differential, fractional or pf comment line, or one out of order). A known
  /// unit's line before the first stack is taken (unit()).
  bool Next(bool* ok) {
    *ok = true;
    if (!lines_.Next()) return false;
    while (!have_ && lines_.kind() == FoldedLines::kPfComment &&
           unit_.Take(lines_.line(), "", lines_.line_number()) && unit_.warning().empty()) {
      if (!lines_.Next()) return false;
    }
    const FoldedLine& fl = lines_.folded();
    // (pf's own notes, as in pf-diff output, end the merge too.)
    if (lines_.kind() != FoldedLines::kStack || fl.fractional || fl.too_large || (have_ && !(prev_ < fl.stack))) {
      *ok = false;
      return false;
    }
    prev_ = fl.stack;
    have_ = true;
    count_ = fl.counts[0];
    ++lines_read_;
    size_t pos = static_cast<size_t>(lines_.position() - data_.data());
    if (pos - released_ > (64u << 20)) {  // keep the resident set small
      ReleaseInput(data_.substr(released_, pos - released_));
      released_ = pos;
    }
    return true;
  }
  std::string_view stack() const { return prev_; }
  uint64_t count() const { return count_; }
  uint64_t lines() const { return lines_read_; }
  /// The unit of its `# pf-unit:` line; kUnspecified when it has none.
  WeightUnit unit() const { return unit_.unit(); }

 private:
  std::string_view data_;
  FoldedLines lines_;
  size_t released_ = 0;
  std::string_view prev_;
  bool have_ = false;
  uint64_t count_ = 0, lines_read_ = 0;
  FoldedUnit unit_;
};

}  // namespace

bool MergeSortedFolded(const std::string_view data[2], const std::string& before,
                       const std::string& after, const DiffOptions& o, ByteSink& sink,
                       uint64_t* lines) {
  unsigned __int128 total[2] = {0, 0};
  WeightUnit unit[2];
  for (int i = 0; i < 2; ++i) {
    // A differential profile (two counts) is refused by the tree path, with the reason.
    if (FoldedColumns(data[i]) != 1) return false;
    SortedFolded f(data[i]);
    bool ok = true;
    while (f.Next(&ok)) total[i] += f.count();
    if (!ok) return false;
    unit[i] = f.unit();
  }
  for (int i = 0; i < 2; ++i) {
    if (total[i] > UINT64_MAX) return false;  // the tree path saturates
  }
  // Profiles of different units: the tree path says so.
  if (CombineUnits(unit[0], unit[1]) == WeightUnit::kUnspecified && unit[0] != unit[1]) {
    return false;
  }
  bool scale = o.normalize && total[0] != 0 && total[0] != total[1];
  BufferedWriter w(sink);
  w.Append(std::string(kPfDiffComment) + "before=" + before + " after=" + after + "\n");
  std::string unit_line = PfUnitLine(CombineUnits(unit[0], unit[1]));  // before the first stack
  SortedFolded b(data[0]), a(data[1]);
  bool ok;
  bool more_b = b.Next(&ok), more_a = a.Next(&ok);
  while (more_b || more_a) {
    int c = !more_b ? 1 : !more_a ? -1 : b.stack().compare(a.stack());
    std::string_view stack = c <= 0 ? b.stack() : a.stack();
    uint64_t nb = c <= 0 ? b.count() : 0, na = c >= 0 ? a.count() : 0;
    if (scale) nb = static_cast<uint64_t>(nb * total[1] / total[0]);
    if (nb || na) {
      if (!unit_line.empty()) {
        w.Append(unit_line);
        unit_line.clear();
      }
      w.Append(stack);
      w.Append(' ');
      w.AppendU64(nb);
      w.Append(' ');
      w.AppendU64(na);
      w.Append('\n');
    }
    if (c <= 0) more_b = b.Next(&ok);
    if (c >= 0) more_a = a.Next(&ok);
  }
  w.Flush();
  sink.Commit();
  *lines += b.lines() + a.lines();
  return true;
}

namespace {

// A weight in a report cell: "1,234" or "1,234.5" (the header names the unit), or a time
// ("12.3 ms") or a size ("4.1 MB") when the weights are nanoseconds or bytes.
std::string Cell(uint64_t v, int decimals, WeightUnit unit) {
  if (unit == WeightUnit::kNanoseconds || unit == WeightUnit::kBytes) {
    return HumanWeight(v, decimals, unit);
  }
  std::string s = FormatWeight(v, decimals);
  size_t dot = s.find('.');
  if (dot == std::string::npos) return WithThousands(s);
  return WithThousands(s.substr(0, dot)) + s.substr(dot);
}

// Per function: total (samples whose stack contains it, once each) and self, per column.
struct Sums {
  uint64_t total[2] = {0, 0};
  uint64_t self[2] = {0, 0};
};

void WriteReport(const StackTree& t, const std::string& before, const std::string& after,
                 const DiffOptions& o, BufferedWriter& w, std::vector<std::string>* warnings) {
  std::unordered_map<uint32_t, Sums> sums;
  // seen_in[f] == n: frame f was counted for the stack ending at n (recursion counts once);
  // one look-up per frame keeps a deep stack linear.
  std::vector<NodeId> seen_in(t.names().size(), StackTree::kRoot);
  uint64_t saturated = 0;
  auto add = [&](uint64_t& sum, uint64_t v) {
    if (__builtin_add_overflow(sum, v, &sum)) {
      sum = UINT64_MAX;
      ++saturated;
    }
  };
  t.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    for (NodeId p : path) {
      uint32_t f = t.frame(p).value;
      if (seen_in[f] == n) continue;
      seen_in[f] = n;
      Sums& s = sums[f];
      for (int c = 0; c < 2; ++c) add(s.total[c], t.self(n, c));
    }
    for (int c = 0; c < 2; ++c) add(sums[t.frame(n).value].self[c], t.self(n, c));
  });
  uint64_t all[2] = {t.Total(0), t.Total(1)};
  saturated += t.saturated();
  if (saturated && warnings) {
    warnings->push_back(SaturationWarning(saturated));
  }
  const int dec = t.decimals();
  const WeightUnit unit = t.unit();
  // A change is kept as a sign and a magnitude: |after - before| always fits 64 bits.
  struct Row {
    std::string_view name;
    Sums s;
    bool shrank;
    uint64_t change;
  };
  std::vector<Row> rows;
  const double floor_count = o.threshold / 100 * static_cast<double>(std::max(all[0], all[1]));
  for (const auto& [f, s] : sums) {
    bool shrank = s.total[1] < s.total[0];
    uint64_t change = shrank ? s.total[0] - s.total[1] : s.total[1] - s.total[0];
    if (change == 0 || static_cast<double>(change) < floor_count) continue;
    rows.push_back({t.names().Name(StrId{f}), s, shrank, change});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.change != b.change ? a.change > b.change : a.name < b.name;
  });
  if (o.limit && rows.size() > o.limit) rows.resize(o.limit);
  char line[512];
  std::snprintf(line, sizeof line, "before: %s, %s%s\nafter:  %s, %s\n", before.c_str(),
                HumanWeight(all[0], dec, unit).c_str(),
                o.normalize ? " (scaled to the after total)" : "", after.c_str(),
                HumanWeight(all[1], dec, unit).c_str());
  w.Append(line);
  std::snprintf(line, sizeof line, "functions whose total changed by at least %g%% of all, "
                "largest change first:\n\n", o.threshold);
  w.Append(line);
  std::snprintf(line, sizeof line, "%14s %9s %14s %14s %9s %9s  %s\n", "change", "relative",
                "total before", "total after", "self %", "self %", "function");
  w.Append(line);
  std::snprintf(line, sizeof line, "%14s %9s %14s %14s %9s %9s\n", "", "", "", "", "before",
                "after");
  w.Append(line);
  for (const Row& r : rows) {
    char rel[32];
    if (r.s.total[0] == 0) {
      std::snprintf(rel, sizeof rel, "new");
    } else {
      double change = static_cast<double>(r.change) * (r.shrank ? -1 : 1);
      std::snprintf(rel, sizeof rel, "%+.1f%%",
                    100.0 * change / static_cast<double>(r.s.total[0]));
    }
    auto pct = [&](uint64_t v, int c) {  // a part: never above 100%
      return all[c] ? std::min(100.0, 100.0 * static_cast<double>(v) / static_cast<double>(all[c]))
                    : 0.0;
    };
    std::string change(1, r.shrank ? '-' : '+');
    change += Cell(r.change, dec, unit);
    std::snprintf(line, sizeof line, "%14s %9s %14s %14s %8.2f%% %8.2f%%  ", change.c_str(),
                  rel, Cell(r.s.total[0], dec, unit).c_str(), Cell(r.s.total[1], dec, unit).c_str(),
                  pct(r.s.self[0], 0), pct(r.s.self[1], 1));
    w.Append(line);
    w.Append(r.name);
    w.Append('\n');
  }
  if (rows.empty()) w.Append("(no function changed by that much)\n");
}

}  // namespace

bool DiffFoldedInAnyOrder(const std::string_view data[2], const std::string& before,
                          const std::string& after, const DiffOptions& o, ByteSink& sink,
                          uint64_t* lines) {
  StackList list(2);
  // Room for both texts' stacks at once: reserving for each in turn would copy the per-stack
  // arrays while the first text's are all in memory.
  list.Reserve(GuessFoldedLines(data[0]) + GuessFoldedLines(data[1]));
  WeightUnit unit[2];
  uint64_t read = 0;
  for (int i = 0; i < 2; ++i) {
    FoldedUnit units;
    if (FoldedColumns(data[i]) != 1 ||
        !ListFolded(data[i], i, true, &list, &units, nullptr, &read)) {
      return false;
    }
    unit[i] = units.unit();
  }
  unsigned __int128 total[2] = {0, 0};
  for (uint32_t s = 0; s < list.size(); ++s) {
    for (int i = 0; i < 2; ++i) total[i] += list.count(s, i);
  }
  if (total[0] == 0 || total[1] == 0 || total[0] > UINT64_MAX || total[1] > UINT64_MAX) {
    return false;  // (the tree path says a side is empty, or saturates)
  }
  if (CombineUnits(unit[0], unit[1]) == WeightUnit::kUnspecified && unit[0] != unit[1]) {
    return false;
  }
  bool scale = o.normalize && total[0] != total[1];
  BufferedWriter w(sink);
  w.Append(std::string(kPfDiffComment) + "before=" + before + " after=" + after + "\n");
  w.Append(PfUnitLine(CombineUnits(unit[0], unit[1])));
  list.DoneAdding();
  const std::vector<uint32_t> order = list.LineOrder();
  for (size_t k = 0; k < order.size(); ++k) {
    list.FetchAhead(order, k);  // the sorted stacks lie anywhere in the list
    const uint32_t s = order[k];
    uint64_t nb = list.count(s, 0), na = list.count(s, 1);
    if (scale) nb = static_cast<uint64_t>(nb * total[1] / total[0]);
    if (!nb && !na) continue;
    AppendStack(list, s, w);
    w.Append(' ');
    w.AppendU64(nb);
    w.Append(' ');
    w.AppendU64(na);
    w.Append('\n');
  }
  w.Flush();
  sink.Commit();
  *lines += read;
  return true;
}

StackTree DiffTrees(const StackTree& before_tree, const StackTree& after_tree,
                    const std::string& before, const std::string& after, const DiffOptions& o,
                    std::vector<std::string>* warnings) {
  if (before_tree.differential() || after_tree.differential()) {
    throw Error("pf-diff compares two ordinary profiles, not differential ones");
  }
  // A profile of several values per stack is compared by its default one (OneValue).
  StackTree views[2];
  const StackTree& b = OneValueView(before_tree, &views[0]);
  const StackTree& a = OneValueView(after_tree, &views[1]);
  StackTree t = StackTree::Differential(CombineSampleTypes(b.sample_type(), a.sample_type()));
  t.SetDecimals(std::max(b.decimals(), a.decimals()));
  if (b.unit() != a.unit() && b.unit() != WeightUnit::kUnspecified &&
      a.unit() != WeightUnit::kUnspecified) {
    std::string what = "the profiles weigh different things (" + before + ": " +
                       std::string(UnitName(b.unit())) + ", " + after + ": " +
                       std::string(UnitName(a.unit())) + ")";
    if (!o.mixed_units) {
      throw Error(what + ": compare like with like (--value chooses a profile's sample type), "
                         "or give --mixed-units to compare the numbers anyway");
    }
    warnings->push_back(what + ": the comparison is of numbers, not of like for like");
  }
  AddColumn(b, 0, o.strip_hex, &t);
  AddColumn(a, 1, o.strip_hex, &t);
  if (o.normalize) {
    // difffolded.pl: before = int(before * total_after / total_before), per stack.
    unsigned __int128 t0 = t.Total(0), t1 = t.Total(1);
    if (t0 && t0 != t1) {
      StackTree scaled = t.EmptyLike();
      std::vector<StrId> frames;
      t.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
        frames.clear();
        for (NodeId p : path) frames.push_back(scaled.names().Intern(t.name(p)));
        NodeId leaf = scaled.AddStack(frames, 0, 0);
        scaled.AddSelf(leaf, static_cast<uint64_t>(t.self(n, 0) * t1 / t0), 0);
        scaled.AddSelf(leaf, t.self(n, 1), 1);
      });
      t = std::move(scaled);
    }
  }
  return t;
}

void WriteDiff(const StackTree& t, const std::string& before, const std::string& after,
               const DiffOptions& o, ByteSink& sink, std::vector<std::string>* warnings) {
  BufferedWriter w(sink);
  if (o.report) {
    WriteReport(t, before, after, o, w, warnings);
  } else {
    // Which is which, for pf-flamegraph's title (other readers skip '#' lines).
    w.Append(std::string(kPfDiffComment) + "before=" + before + " after=" + after + "\n");
    WriteFolded(t, w);
    if (t.saturated()) warnings->push_back(SaturationWarning(t.saturated()));
  }
  w.Flush();
  sink.Commit();
}

}  // namespace pf
