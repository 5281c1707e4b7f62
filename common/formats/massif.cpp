// The massif reader (massif.h). One pass over the lines: the snapshot headers are read for
// every snapshot (to choose one and to name those that have trees), and the tree of a
// snapshot is folded only when it may be the one chosen (for "last", every tree, each
// replacing the one before). A tree is read with a stack of open entries: an entry's line
// closes the entries at its depth and below, and a closed entry's own bytes (its bytes
// minus its children's) go on the stack of frames from the first entry under the root down
// to it, reversed to be root first.

#include "formats/massif.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "base/diagnostics.h"
#include "base/error.h"
#include "io/line_reader.h"

namespace pf {

namespace {

bool ParseU64(std::string_view t, uint64_t* v) {
  if (t.empty()) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

struct Snapshot {
  uint64_t number = 0;
  uint64_t line = 0;        // of its `snapshot=` line
  uint64_t heap = 0;        // mem_heap_B
  std::string tree = "?";   // empty, detailed, peak
};

class MassifParser {
 public:
  MassifParser(const std::string& file, std::string_view want, ReadReport* report)
      : file_(file), want_(want), report_(report) {
    CheckMassifSnapshot(want_);
    if (want_ != "peak" && want_ != "last") ParseU64(want_, &want_number_);
  }

  void Parse(ByteSource& source) {
    skipped_.Merge(ForEachLine(source, [&](std::string_view line, uint64_t number) {
      line_no_ = number;
      Line(line);  // (nothing read points into the input)
    }));
    EndTree();
  }

  StackTree Take() {
    if (!header_) throw Error(file_, "no massif header (`desc:`, `cmd:`, `time_unit:`): not a massif file");
    if (!chosen_) throw Error(file_, NoSnapshotMessage());
    if (skipped_.count) {
      report_->warnings.push_back(Plural(skipped_.count, "line", "lines") +
                                  " skipped (not massif's), first at " +
                                  Where(skipped_.first_file, skipped_.first_line));
      report_->skipped_lines += skipped_.count;
    }
    if (negative_.count) {
      report_->warnings.push_back(
          Plural(negative_.count, "heap tree entry lists", "heap tree entries list") +
          " more bytes below it than it holds (counted as 0 bytes of its own), first at " +
          Where(negative_.first_file, negative_.first_line));
    }
    uint64_t total = chosen_->Total();
    if (total != chosen_heap_) {
      report_->warnings.push_back(Where(file_, chosen_line_) + ": the heap tree of snapshot " +
                                  std::to_string(chosen_number_) + " holds " +
                                  std::to_string(total) + " bytes, its mem_heap_B says " +
                                  std::to_string(chosen_heap_));
    }
    return std::move(*chosen_);
  }

 private:
  void Line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i + 1 < line.size() && line[i] == 'n' && line[i + 1] >= '0' && line[i + 1] <= '9') {
      TreeLine(line, i);
      return;
    }
    EndTree();
    if (line.empty() || line[0] == '#') return;
    if (!header_) {
      if (StartsWith(line, "desc:") || StartsWith(line, "cmd:")) return;
      if (StartsWith(line, "time_unit:")) {
        header_ = true;
        return;
      }
      throw Error(Where(file_, line_no_), "not a massif file (no `desc:`, `cmd:`, `time_unit:` header)");
    }
    size_t eq = line.find('=');
    std::string_view key = line.substr(0, eq), value = eq == line.npos ? "" : line.substr(eq + 1);
    uint64_t v = 0;
    if (key == "snapshot" && ParseU64(value, &v)) {
      snapshots_.push_back({v, line_no_, 0, "?"});
    } else if (snapshots_.empty()) {
      skipped_.Add(file_, line_no_);
    } else if (key == "mem_heap_B" && ParseU64(value, &v)) {
      snapshots_.back().heap = v;
    } else if (key == "heap_tree") {
      snapshots_.back().tree = value;
      StartTree();
    } else if (key != "time" && key != "mem_heap_extra_B" && key != "mem_stacks_B") {
      skipped_.Add(file_, line_no_);
    }
  }

  // A snapshot's `heap_tree=` line: its tree follows when it is detailed or the peak.
  void StartTree() {
    const Snapshot& s = snapshots_.back();
    if (s.tree != "detailed" && s.tree != "peak") return;
    bool wanted = want_ == "last" || (want_ == "peak" && s.tree == "peak") ||
                  (want_ != "last" && want_ != "peak" && s.number == want_number_);
    if (!wanted) return;
    reading_.emplace(SampleType{"inuse_space", WeightUnit::kBytes});
    chosen_number_ = s.number;
    chosen_line_ = s.line;
    chosen_heap_ = s.heap;
  }

  void TreeLine(std::string_view line, size_t depth) {
    if (!reading_) {
      if (snapshots_.empty()) skipped_.Add(file_, line_no_);
      return;  // a tree not chosen
    }
    // "nK: BYTES text"
    std::string_view rest = line.substr(depth + 1);
    size_t colon = rest.find(": ");
    uint64_t children = 0, bytes = 0;
    if (colon == rest.npos || !ParseU64(rest.substr(0, colon), &children)) {
      skipped_.Add(file_, line_no_);
      return;
    }
    rest.remove_prefix(colon + 2);
    size_t space = rest.find(' ');
    if (!ParseU64(rest.substr(0, space), &bytes)) {
      skipped_.Add(file_, line_no_);
      return;
    }
    std::string_view text = space == rest.npos ? std::string_view() : rest.substr(space + 1);
    if (depth > open_.size() || (depth == 0) != open_.empty()) {
      throw Error(Where(file_, line_no_), "a heap tree entry at depth " + std::to_string(depth) +
                                              " under " + std::to_string(open_.size()) +
                                              " open entries");
    }
    while (open_.size() > depth) Close();
    if (!open_.empty()) open_.back().children_bytes = AddSat(open_.back().children_bytes, bytes);
    StrId frame = depth == 0 ? StrId{} : reading_->names().Intern(MassifFrameName(text));
    open_.push_back({frame, bytes, 0});
  }

  // The entry on top of the stack is complete: its own bytes go on its stack.
  void Close() {
    Entry e = open_.back();
    uint64_t own = e.bytes - std::min(e.bytes, e.children_bytes);
    if (e.children_bytes > e.bytes) negative_.Add(file_, line_no_);
    if (own) {
      stack_.clear();
      for (size_t i = open_.size(); i-- > 1;) stack_.push_back(open_[i].frame);
      if (stack_.empty()) stack_.push_back(reading_->names().Intern("[heap outside the tree]"));
      reading_->AddStack(stack_, own);
    }
    open_.pop_back();
  }

  // Any line that is not a tree entry ends the tree being read.
  void EndTree() {
    if (!reading_) return;
    while (!open_.empty()) Close();
    chosen_ = std::move(reading_);
    reading_.reset();
  }

  std::string NoSnapshotMessage() const {
    std::string with;
    bool found = false;
    for (const Snapshot& s : snapshots_) {
      if (want_ != "peak" && want_ != "last" && s.number == want_number_) found = true;
      if (s.tree == "detailed" || s.tree == "peak") {
        with += (with.empty() ? "" : ", ") + std::to_string(s.number) +
                (s.tree == "peak" ? " (peak)" : "");
      }
    }
    std::string what = want_ == "peak"   ? "no snapshot is marked as the peak"
                       : want_ == "last" ? "no snapshot has a heap tree"
                       : found ? "snapshot " + want_ + " has no heap tree (only detailed snapshots have one)"
                               : "there is no snapshot " + want_ + " (the file has " +
                                     std::to_string(snapshots_.size()) + ")";
    return what + "; the snapshots with a heap tree: " + (with.empty() ? "none" : with) +
           " (choose one with --snapshot=N)";
  }

  struct Entry {
    StrId frame;
    uint64_t bytes;
    uint64_t children_bytes;
  };

  const std::string& file_;
  std::string want_;
  uint64_t want_number_ = 0;
  ReadReport* report_;
  uint64_t line_no_ = 0;
  bool header_ = false;
  std::vector<Snapshot> snapshots_;
  std::optional<StackTree> reading_, chosen_;
  uint64_t chosen_number_ = 0, chosen_line_ = 0, chosen_heap_ = 0;
  std::vector<Entry> open_;
  std::vector<StrId> stack_;
  SkipCount skipped_, negative_;
};

/// "0x109167: alloc_row" -> "alloc_row".
std::string_view StripAddress(std::string_view t) {
  if (!StartsWith(t, "0x")) return t;
  size_t colon = t.find(": ");
  if (colon == t.npos) return t;
  for (char c : t.substr(2, colon - 2)) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return t;
  }
  return t.substr(colon + 2);
}

}  // namespace

std::string MassifFrameName(std::string_view text) {
  // "in 5 places, all below massif's threshold (1.00%)", "in 1 place, below ..."
  if (StartsWith(text, "in ") && text.find("below massif's threshold") != text.npos) {
    std::string_view n = text.substr(3, text.find(' ', 3) - 3);
    return "[below threshold: " + std::string(n) + (n == "1" ? " place]" : " places]");
  }
  std::string_view name = StripAddress(text);
  std::string_view where;
  // A trailing " (file:line)" or " (in object)".
  if (!name.empty() && name.back() == ')') {
    size_t open = name.rfind(" (");
    if (open != name.npos) {
      std::string_view inner = name.substr(open + 2, name.size() - open - 3);
      size_t colon = inner.rfind(':');
      bool file_line = colon != inner.npos && colon + 1 < inner.size() &&
                       inner.find_first_not_of("0123456789", colon + 1) == inner.npos;
      if (StartsWith(inner, "in ") || file_line) {
        where = inner;
        name = name.substr(0, open);
      }
    }
  }
  if (name == "???" && StartsWith(where, "in ")) {
    std::string_view object = where.substr(3);
    std::string frame = "[";  // (appended: g++ 12 warns falsely on "[" + std::string)
    frame.append(object.substr(object.rfind('/') + 1));
    frame += ']';
    return frame;
  }
  return name.empty() ? std::string("[unknown]") : std::string(name);
}

namespace {

/// The number of the last snapshot with a tree in `all` (a whole file), found from its end:
/// "last" then reads only that tree, not every tree before it. "" when there is none.
std::string LastTreeSnapshot(std::string_view all) {
  for (size_t end = all.size(); end > 0;) {
    size_t at = all.rfind("\nheap_tree=", end - 1);
    if (at == std::string_view::npos) return "";
    std::string_view value = all.substr(at + 11, 8);
    end = at;
    if (!StartsWith(value, "detailed") && !StartsWith(value, "peak")) continue;
    size_t snap = all.rfind("\nsnapshot=", at);
    if (snap == std::string_view::npos) return "";
    size_t eol = all.find_first_of("\r\n", snap + 10);
    std::string_view number = all.substr(snap + 10, eol - snap - 10);
    uint64_t n;
    return ParseU64(number, &n) ? std::string(number) : std::string();
  }
  return "";
}

}  // namespace

void CheckMassifSnapshot(std::string_view snapshot) {
  uint64_t n;
  if (snapshot != "peak" && snapshot != "last" && !ParseU64(snapshot, &n)) {
    throw UsageError("--snapshot must be peak, last or a snapshot number, not '" +
                     std::string(snapshot) + "'");
  }
}

StackTree ReadMassif(ByteSource& source, std::string_view snapshot, ReadReport* report) {
  std::string last;
  if (snapshot == "last" && source.stable()) {
    last = LastTreeSnapshot(source.Peek());
    if (!last.empty()) snapshot = last;
  }
  MassifParser parser(source.name(), snapshot, report);
  parser.Parse(source);
  return parser.Take();
}

}  // namespace pf
