// The callgrind reader (callgrind.h). One pass over the lines, as blocks of whole lines
// (ForEachLine), with the state the format defines: the current object (`ob=`), function
// (`fn=`) and called function (`cfn=`), and the pending `calls=` line whose next cost line
// is that call's inclusive cost. Names are compressed (`fn=(12) main` defines id 12,
// `fn=(12)` uses it; one table for ob/cob, one for fn/cfn); files (fl, fi, fe, cfi, cfl)
// and jumps (jump, jcnd) are not needed for costs and are skipped. A cost line is its
// positions (as many as the `positions:` line names: line, instr, ...; absolute, relative
// "+3"/"-2", "*" or hex) followed by at most one count per event, missing ones zero.
// A function is its name in its object (`ob=` for `fn=`; for `cfn=`, `cob=` when the call
// says, else the caller's object), so the program's "(below main)" and libc's are two, as
// callgrind_annotate has them (it adds the file: pf does not split a function whose code
// comes from several files, as inlined code does).

#include "formats/callgrind.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/diagnostics.h"
#include "base/error.h"
#include "io/line_reader.h"

namespace pf {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlank(std::string_view s) {
  while (!s.empty() && (IsBlank(s.front()) || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// The next blank-separated token of `s` (consumed); empty at the end.
std::string_view NextToken(std::string_view* s) {
  size_t i = 0;
  while (i < s->size() && IsBlank((*s)[i])) ++i;
  size_t j = i;
  while (j < s->size() && !IsBlank((*s)[j])) ++j;
  std::string_view t = s->substr(i, j - i);
  s->remove_prefix(j);
  return t;
}

bool ParseU64(std::string_view t, uint64_t* v) {
  if (t.empty()) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

/// A subposition: a number, "+N", "-N", "*" or hex "0x...".
bool IsPosition(std::string_view t) {
  if (t == "*") return true;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    for (char c : t.substr(2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  }
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
  if (t.empty()) return false;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

class CallgrindParser {
 public:
  CallgrindParser(const std::string& file, ReadReport* report) : file_(file), report_(report) {}

  void Parse(ByteSource& source) {
    skipped_.Merge(ForEachLine(source, [&](std::string_view line, uint64_t number) {
      line_no_ = number;
      Line(line);  // (names read are copied)
    }));
    if (!graph_) {
      throw Error(file_, "no `events:` line: not a callgrind file");
    }
  }

  FunctionGraph Take() {
    if (skipped_.count) {
      report_->warnings.push_back(Plural(skipped_.count, "line", "lines") +
                                  " skipped (not callgrind's), first at " +
                                  Where(skipped_.first_file, skipped_.first_line));
      report_->skipped_lines += skipped_.count;
    }
    // `totals:` is written after the costs; callgrind's `summary:` may differ from it by a
    // few instructions (with --cache-sim), so it is checked only when there is no totals:.
    if (!totals_.empty()) {
      CheckTotals("totals:", totals_);
    } else {
      CheckTotals("summary:", summary_);
    }
    return std::move(*graph_);
  }

 private:
  void Line(std::string_view line) {
    if (line.empty() || line[0] == '#') return;
    char c = line[0];
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
      CostLine(line);
      return;
    }
    size_t eq = line.find('=');
    size_t colon = line.find(':');
    if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) {
      Spec(line.substr(0, eq), line.substr(eq + 1));
    } else if (colon != std::string_view::npos) {
      Header(line.substr(0, colon), TrimBlank(line.substr(colon + 1)));
    } else if (!TrimBlank(line).empty()) {
      skipped_.Add(file_, line_no_);
    }
  }

  void Header(std::string_view key, std::string_view value) {
    if (key == "events") {
      std::vector<SampleType> types;
      for (std::string_view t = NextToken(&value); !t.empty(); t = NextToken(&value)) {
        types.push_back({std::string(t), CallgrindEventUnit(t)});
      }
      if (types.empty()) throw Error(Where(file_, line_no_), "`events:` names no event");
      if (graph_ && graph_->sample_types() != types) {
        throw Error(Where(file_, line_no_),
                    "`events:` differs from the one before it (parts of different events)");
      }
      if (!graph_) graph_.emplace(std::move(types));
    } else if (key == "positions") {
      positions_ = 0;
      for (std::string_view t = NextToken(&value); !t.empty(); t = NextToken(&value)) ++positions_;
      if (positions_ == 0) throw Error(Where(file_, line_no_), "`positions:` names none");
    } else if (key == "summary" || key == "totals") {
      std::vector<uint64_t>& sums = key == "summary" ? summary_ : totals_;
      size_t i = 0;
      uint64_t v;
      for (std::string_view t = NextToken(&value); !t.empty(); t = NextToken(&value), ++i) {
        if (!ParseU64(t, &v)) {
          skipped_.Add(file_, line_no_);
          return;
        }
        if (sums.size() <= i) sums.resize(i + 1, 0);
        sums[i] = AddSat(sums[i], v);
      }
    }
    // version, creator, cmd, pid, part, thread, desc, event (long names): nothing to read.
  }

  // `name=(id) text`, `name=(id)` or `name=text`: the name, defining or using the id.
  std::string_view Name(std::unordered_map<uint64_t, std::string>& table, std::string_view v) {
    v = TrimBlank(v);
    if (v.empty() || v[0] != '(') return v;
    size_t close = v.find(')');
    uint64_t id;
    if (close == std::string_view::npos || !ParseU64(v.substr(1, close - 1), &id)) return v;
    std::string_view text = TrimBlank(v.substr(close + 1));
    if (!text.empty()) {
      std::string& slot = table[id];
      slot.assign(text);
      return slot;
    }
    auto it = table.find(id);
    if (it == table.end()) {
      throw Error(Where(file_, line_no_),
                  "name id (" + std::to_string(id) + ") used before it was defined");
    }
    return it->second;
  }

  void Spec(std::string_view key, std::string_view value) {
    if (key == "fn") {
      NeedEvents();
      fn_ = static_cast<int64_t>(graph_->AddFunction(Name(fn_names_, value), ob_));
      cfn_.clear();
      has_cfn_ = call_pending_ = has_cob_ = false;
    } else if (key == "cfn") {
      cfn_ = Name(fn_names_, value);
      has_cfn_ = true;
    } else if (key == "ob") {
      std::string_view ob = Name(ob_names_, value);
      ob_.assign(ob == "???" ? std::string_view() : ob);
      has_cob_ = false;
    } else if (key == "cob") {
      std::string_view ob = Name(ob_names_, value);
      cob_.assign(ob == "???" ? std::string_view() : ob);
      has_cob_ = true;
    } else if (key == "fl" || key == "fi" || key == "fe" || key == "cfi" || key == "cfl" ||
               key == "jfi") {
      Name(file_names_, value);
    } else if (key == "calls") {
      uint64_t count;
      std::string_view v = value;
      if (fn_ < 0 || !has_cfn_ || !ParseU64(NextToken(&v), &count)) {
        skipped_.Add(file_, line_no_);
        return;
      }
      call_pending_ = true;
      call_count_ = count;
      callee_ = graph_->AddFunction(cfn_, has_cob_ ? cob_ : ob_);
    } else if (key != "jump" && key != "jcnd") {
      skipped_.Add(file_, line_no_);
    }
  }

  void NeedEvents() {
    if (!graph_) throw Error(Where(file_, line_no_), "a function before the `events:` line");
  }

  void CostLine(std::string_view line) {
    bool call = call_pending_;
    call_pending_ = false;
    if (!graph_ || fn_ < 0) {
      skipped_.Add(file_, line_no_);
      return;
    }
    std::string_view rest = line;
    for (int i = 0; i < positions_; ++i) {
      if (!IsPosition(NextToken(&rest))) {
        skipped_.Add(file_, line_no_);
        return;
      }
    }
    uint64_t costs[64];
    int n = 0, columns = graph_->columns();
    for (std::string_view t = NextToken(&rest); !t.empty(); t = NextToken(&rest)) {
      if (n >= columns || n >= 64 || !ParseU64(t, &costs[n])) {
        skipped_.Add(file_, line_no_);
        return;
      }
      ++n;
    }
    uint32_t f = static_cast<uint32_t>(fn_);
    has_cob_ = false;  // a call's object is said before each call into another object
    if (!call) {
      for (int e = 0; e < n; ++e) {
        if (costs[e]) graph_->AddSelf(f, e, costs[e]);
      }
      return;
    }
    uint32_t c = graph_->AddCall(f, callee_);
    graph_->AddCallCount(c, call_count_);
    for (int e = 0; e < n; ++e) {
      if (costs[e]) graph_->AddCallCost(c, 0, e, costs[e]);
    }
  }

  // The file's own total of each event against the sum of the self costs read.
  void CheckTotals(const char* what, const std::vector<uint64_t>& sums) {
    if (sums.empty()) return;
    for (int e = 0; e < graph_->columns(); ++e) {
      uint64_t said = e < static_cast<int>(sums.size()) ? sums[e] : 0;
      uint64_t read = graph_->Total(e);
      if (said != read) {
        report_->warnings.push_back(file_ + ": the self costs of " +
                                    graph_->sample_types()[e].name + " sum to " +
                                    std::to_string(read) + ", the file's " + what + " line says " +
                                    std::to_string(said));
      }
    }
  }

  const std::string& file_;
  ReadReport* report_;
  std::optional<FunctionGraph> graph_;
  uint64_t line_no_ = 0;
  int positions_ = 1;  // "line" unless `positions:` says
  std::unordered_map<uint64_t, std::string> fn_names_, ob_names_, file_names_;
  std::string ob_, cob_;  // the objects of fn= and of the next call ("" unknown)
  bool has_cob_ = false;  // cob_ given for the next call (else it is ob_)
  int64_t fn_ = -1;
  std::string cfn_;  // the function of the next call
  bool has_cfn_ = false, call_pending_ = false;
  uint32_t callee_ = 0;
  uint64_t call_count_ = 0;
  std::vector<uint64_t> summary_, totals_;
  SkipCount skipped_;
};

/// `name` cut at its first "'" (a --separate-callers context's function, or a recursion
/// level's: "f'2").
std::string_view ContextFunction(std::string_view name) {
  return name.substr(0, name.find('\''));
}

/// The names of context `name`, innermost first, without callgrind's recursion level: with
/// --separate-recs (2 by default) the calls a recursive function makes to itself are a
/// function "f'2" ("f'2'main'..." with --separate-callers), a level of f, not a caller named
/// "2". Callgrind's contexts hold a run of direct recursion once, so the levels are one frame.
std::vector<std::string_view> ContextNames(std::string_view name) {
  std::vector<std::string_view> names;
  while (true) {
    size_t q = name.find('\'');
    std::string_view part = name.substr(0, q);
    bool level = names.size() == 1 && !part.empty() &&
                 std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!level) names.push_back(part);
    if (q == std::string_view::npos) return names;
    name.remove_prefix(q + 1);
  }
}

}  // namespace

WeightUnit CallgrindEventUnit(std::string_view event) {
  return event == "Ir" ? WeightUnit::kInstructions : WeightUnit::kEvents;
}

FunctionGraph ReadCallgrind(ByteSource& source, ReadReport* report) {
  CallgrindParser parser(source.name(), report);
  parser.Parse(source);
  return parser.Take();
}

bool HasCallerContexts(const FunctionGraph& graph) {
  for (const FunctionGraph::Function& f : graph.functions()) {
    if (f.name.find('\'') != std::string::npos && ContextNames(f.name).size() > 1) return true;
  }
  return false;
}

FunctionGraph MergeCallerContexts(const FunctionGraph& graph) {
  FunctionGraph out(graph.sample_types());
  out.Merge(graph, ContextFunction);
  return out;
}

StackTree CallgrindStacks(const FunctionGraph& graph, const std::string& source_name) {
  if (!HasCallerContexts(graph)) {
    throw Error(source_name,
                "a callgrind file holds call edges, not call stacks: draw its call graph with "
                "pf-dot (pf-dot " + source_name + " | dot -Tsvg > graph.svg), or record stacks "
                "with valgrind --tool=callgrind --separate-callers=N (N deeper than the deepest "
                "stack)");
  }
  // A root is a context callgrind saw no caller of: a name without "'" that is never called.
  std::vector<bool> called(graph.functions().size(), false);
  for (const FunctionGraph::Call& c : graph.calls()) called[c.callee] = true;
  std::unordered_set<std::string_view> roots;
  for (uint32_t f = 0; f < graph.functions().size(); ++f) {
    if (called[f]) continue;
    std::vector<std::string_view> names = ContextNames(graph.functions()[f].name);
    if (names.size() == 1) roots.insert(names[0]);
  }
  // The columns: every event, in the file's order; the first is the default, as
  // callgrind_annotate shows it.
  int columns = graph.columns();
  StackTree tree(graph.sample_types());
  tree.set_default_column(0);
  std::vector<StrId> stack;
  uint64_t cut = 0;
  std::string first_cut;
  for (uint32_t f = 0; f < graph.functions().size(); ++f) {
    const FunctionGraph::Function& fn = graph.functions()[f];
    stack.clear();
    std::vector<std::string_view> names = ContextNames(fn.name);
    std::string_view outermost = names.back();
    for (std::string_view name : names) stack.push_back(tree.names().Intern(name));
    bool costs = false;
    for (int e = 0; e < columns && !costs; ++e) costs = graph.self(f, e) != 0;
    if (!costs) continue;
    if (!roots.count(outermost)) {
      if (cut++ == 0) first_cut = fn.name;
      continue;
    }
    std::reverse(stack.begin(), stack.end());
    NodeId leaf = tree.AddStack(stack, 0, 0);
    for (int e = 0; e < columns; ++e) {
      uint64_t w = graph.self(f, e);
      if (w) tree.AddSelf(leaf, w, e);
    }
  }
  if (cut) {
    throw Error(source_name,
                Plural(cut, "caller context does", "caller contexts do") +
                    " not reach a root (the first: " + first_cut.substr(0, 200) +
                    "): the file was written with a --separate-callers smaller than its deepest "
                    "stack; record again with a larger one, or draw the call graph with pf-dot");
  }
  return tree;
}

}  // namespace pf
