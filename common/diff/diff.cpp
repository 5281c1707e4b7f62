#include "diff/diff.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "io/line_reader.h"
#include "render/flame.h"
#include "stacks/folded.h"

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

// Adds every stack of `in` to column `col` of `out` (renaming frames when asked).
void AddColumn(const StackTree& in, int col, bool strip_hex, StackTree* out) {
  std::vector<StrId> map(in.names().size());
  std::vector<bool> mapped(in.names().size(), false);
  std::vector<NodeId> path;
  std::vector<StrId> frames;
  for (NodeId n = 1; n < in.size(); ++n) {
    uint64_t w = in.self(n);
    if (!w) continue;
    path.clear();
    for (NodeId p = n; p != StackTree::kRoot; p = in.parent(p)) path.push_back(p);
    frames.clear();
    for (size_t i = path.size(); i-- > 0;) {
      uint32_t f = in.frame(path[i]).value;
      if (!mapped[f]) {
        std::string_view name = in.names().Name(StrId{f});
        map[f] = out->names().Intern(strip_hex ? std::string_view(StripHex(name)) : name);
        mapped[f] = true;
      }
      frames.push_back(map[f]);
    }
    out->AddSelf(out->AddStack(frames, 0, col), w, col);
  }
}

// The lines of a mapped folded file, one stack at a time, for the sorted merge below.
class SortedFolded {
 public:
  explicit SortedFolded(std::string_view data) : data_(data) {}

  /// Advances to the next stack; false at the end or at a line the merge cannot take (a
  /// malformed, differential, fractional or comment-like line, or one out of order).
  bool Next(bool* ok) {
    *ok = true;
    while (pos_ < data_.size()) {
      size_t nl = data_.find('\n', pos_);
      std::string_view line =
          data_.substr(pos_, nl == std::string_view::npos ? std::string_view::npos : nl - pos_);
      pos_ = nl == std::string_view::npos ? data_.size() : nl + 1;
      if (IsFoldedIgnorable(line) || (line.size() == 1 && line[0] == '\r')) {
        if (line.substr(0, 5) == "# pf-") *ok = false;  // pf's own notes (pf-diff output)
        if (!*ok) return false;
        continue;
      }
      FoldedLine fl;
      if (line.size() > BlockReader::kMaxLineBytes || !ParseFoldedLine(line, 1, &fl) ||
          fl.fractional || (have_ && !(prev_ < fl.stack))) {
        *ok = false;
        return false;
      }
      prev_ = fl.stack;
      have_ = true;
      count_ = fl.counts[0];
      ++lines_;
      if (pos_ - released_ > (64u << 20)) {  // keep the resident set small
        ReleaseInput(data_.substr(released_, pos_ - released_));
        released_ = pos_;
      }
      return true;
    }
    return false;
  }
  std::string_view stack() const { return prev_; }
  uint64_t count() const { return count_; }
  uint64_t lines() const { return lines_; }

 private:
  std::string_view data_;
  size_t pos_ = 0, released_ = 0;
  std::string_view prev_;
  bool have_ = false;
  uint64_t count_ = 0, lines_ = 0;
};

// Two folded files already sorted with one stack per line (what pf-collapse and pf-diff
// write) are merged line by line, in memory bounded by the output buffer, instead of being
// loaded into trees: a first pass checks the order and sums the totals, the second writes.
// Returns false, having written nothing, when the inputs do not qualify.
bool MergeSortedFolded(const std::string& before, const std::string& after, const DiffOptions& o,
                       ByteSink& sink, CollapseReport* report) {
  if (o.strip_hex || o.report) return false;
  // Only regular files: opening them here and again on the tree path reads nothing twice,
  // where a pipe would lose what this look consumed.
  for (const std::string* path : {&before, &after}) {
    struct stat st;
    if (*path == "-" || stat(path->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  }
  std::unique_ptr<ByteSource> in[2] = {OpenInput(before), OpenInput(after)};
  std::string_view data[2];
  unsigned __int128 total[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (!in[i]->stable() || !in[i]->releasable()) return false;
    data[i] = in[i]->Peek();
    if (SniffFormat(data[i].substr(0, 64 << 10)) != InputFormat::kFolded) return false;
    SortedFolded f(data[i]);
    bool ok = true;
    while (f.Next(&ok)) total[i] += f.count();
    if (!ok) return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (total[i] > UINT64_MAX) return false;  // the tree path saturates
  }
  bool scale = o.normalize && total[0] != 0 && total[0] != total[1];
  BufferedWriter w(sink);
  w.Append(std::string(kDiffHeaderPrefix) + "before=" + before + " after=" + after + "\n");
  SortedFolded b(data[0]), a(data[1]);
  bool ok;
  bool more_b = b.Next(&ok), more_a = a.Next(&ok);
  while (more_b || more_a) {
    int c = !more_b ? 1 : !more_a ? -1 : b.stack().compare(a.stack());
    std::string_view stack = c <= 0 ? b.stack() : a.stack();
    uint64_t nb = c <= 0 ? b.count() : 0, na = c >= 0 ? a.count() : 0;
    if (scale) nb = static_cast<uint64_t>(nb * total[1] / total[0]);
    if (nb || na) {
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
  report->folded_lines += b.lines() + a.lines();
  return true;
}

std::string Commas(uint64_t v) { return WithThousands(std::to_string(v)); }
std::string Signed(int64_t v) {
  std::string s = WithThousands(std::to_string(v < 0 ? -v : v));
  return (v < 0 ? "-" : "+") + s;
}

// Per function: total (samples whose stack contains it, once each) and self, per column.
struct Sums {
  uint64_t total[2] = {0, 0};
  uint64_t self[2] = {0, 0};
};

void WriteReport(const StackTree& t, const std::string& before, const std::string& after,
                 const DiffOptions& o, BufferedWriter& w) {
  std::unordered_map<uint32_t, Sums> sums;
  std::vector<NodeId> path;
  std::vector<uint32_t> seen;
  for (NodeId n = 1; n < t.size(); ++n) {
    if (!t.has_self(n)) continue;
    path.clear();
    for (NodeId p = n; p != StackTree::kRoot; p = t.parent(p)) path.push_back(p);
    seen.clear();
    for (NodeId p : path) {
      uint32_t f = t.frame(p).value;
      if (std::find(seen.begin(), seen.end(), f) != seen.end()) continue;  // recursion: once
      seen.push_back(f);
      for (int c = 0; c < 2; ++c) sums[f].total[c] += t.self(n, c);
    }
    for (int c = 0; c < 2; ++c) sums[t.frame(n).value].self[c] += t.self(n, c);
  }
  uint64_t all[2] = {t.Total(0), t.Total(1)};
  struct Row {
    std::string_view name;
    Sums s;
    int64_t change;
  };
  std::vector<Row> rows;
  const double floor_count = o.threshold / 100 * static_cast<double>(std::max(all[0], all[1]));
  for (const auto& [f, s] : sums) {
    int64_t change = static_cast<int64_t>(s.total[1]) - static_cast<int64_t>(s.total[0]);
    if (change == 0 || std::abs(static_cast<double>(change)) < floor_count) continue;
    rows.push_back({t.names().Name(StrId{f}), s, change});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    int64_t x = a.change < 0 ? -a.change : a.change, y = b.change < 0 ? -b.change : b.change;
    return x != y ? x > y : a.name < b.name;
  });
  if (o.limit && rows.size() > o.limit) rows.resize(o.limit);
  char line[512];
  std::snprintf(line, sizeof line, "before: %s, %s samples%s\nafter:  %s, %s samples\n",
                before.c_str(), Commas(all[0]).c_str(),
                o.normalize ? " (scaled to the after total)" : "", after.c_str(),
                Commas(all[1]).c_str());
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
      std::snprintf(rel, sizeof rel, "%+.1f%%",
                    100.0 * static_cast<double>(r.change) / static_cast<double>(r.s.total[0]));
    }
    auto pct = [&](uint64_t v, int c) {
      return all[c] ? 100.0 * static_cast<double>(v) / static_cast<double>(all[c]) : 0.0;
    };
    std::snprintf(line, sizeof line, "%14s %9s %14s %14s %8.2f%% %8.2f%%  ", Signed(r.change).c_str(),
                  rel, Commas(r.s.total[0]).c_str(), Commas(r.s.total[1]).c_str(),
                  pct(r.s.self[0], 0), pct(r.s.self[1], 1));
    w.Append(line);
    w.Append(r.name);
    w.Append('\n');
  }
  if (rows.empty()) w.Append("(no function changed by that much)\n");
}

}  // namespace

void DiffFiles(const std::string& before, const std::string& after, const DiffOptions& o,
               ByteSink& sink, CollapseReport* report) {
  if (MergeSortedFolded(before, after, o, sink, report)) return;
  // Each profile read with a report of its own, so an empty one is said to be, and why.
  CollapseReport side[2];
  const CollapseOptions defaults;
  StackTree b = CollapseFilesToTree({before}, defaults, &side[0]);
  StackTree a = CollapseFilesToTree({after}, defaults, &side[1]);
  for (int i = 0; i < 2; ++i) {
    CollapseReport& r = side[i];
    report->warnings.insert(report->warnings.end(), r.warnings.begin(), r.warnings.end());
    report->notices.insert(report->notices.end(), r.notices.begin(), r.notices.end());
    report->samples += r.samples;
    report->folded_lines += r.folded_lines;
    if (r.empty) {
      report->warnings.push_back((i ? "AFTER " + after : "BEFORE " + before) + ": " +
                                 EmptyResultReason(r, ""));
    }
  }
  if (b.columns() != 1 || a.columns() != 1) {
    throw Error("pf-diff compares two ordinary profiles, not differential ones");
  }
  StackTree t(2);
  AddColumn(b, 0, o.strip_hex, &t);
  AddColumn(a, 1, o.strip_hex, &t);
  if (o.normalize) {
    // difffolded.pl: before = int(before * total_after / total_before), per stack.
    unsigned __int128 t0 = t.Total(0), t1 = t.Total(1);
    if (t0 && t0 != t1) {
      StackTree scaled(2);
      std::vector<NodeId> path;
      std::vector<StrId> frames;
      for (NodeId n = 1; n < t.size(); ++n) {
        if (!t.has_self(n)) continue;
        path.clear();
        for (NodeId p = n; p != StackTree::kRoot; p = t.parent(p)) path.push_back(p);
        frames.clear();
        for (size_t i = path.size(); i-- > 0;) {
          frames.push_back(scaled.names().Intern(t.name(path[i])));
        }
        NodeId leaf = scaled.AddStack(frames, 0, 0);
        scaled.AddSelf(leaf, static_cast<uint64_t>(t.self(n, 0) * t1 / t0), 0);
        scaled.AddSelf(leaf, t.self(n, 1), 1);
      }
      t = std::move(scaled);
    }
  }
  BufferedWriter w(sink);
  if (o.report) {
    WriteReport(t, before, after, o, w);
  } else {
    // Which is which, for pf-flamegraph's title (other readers skip '#' lines).
    w.Append(std::string(kDiffHeaderPrefix) + "before=" + before + " after=" + after + "\n");
    WriteFolded(t, w);
  }
  w.Flush();
  sink.Commit();
}

}  // namespace pf
