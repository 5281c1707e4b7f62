// pf-dot --list (source_list.h): pprof's -list from stacks whose frames carry source lines
// (internal/report/source.go's printSource and getSourceFromFile).

#include "callgraph/source_list.h"

#include <re2/re2.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "base/error.h"
#include "callgraph/path_walker.h"
#include "callgraph/text_report.h"

namespace pf {

namespace {

constexpr int64_t kMargin = 5;  // lines of context before the first and after the last

std::string_view FunctionPart(std::string_view frame) {
  std::string_view func, file;
  int64_t line;
  return SplitSrclineFrame(frame, &func, &file, &line) ? func : frame;
}

struct Weights {
  uint64_t flat = 0, cum = 0;
};
// (function, file) -> line -> weights.
using Lines = std::map<int64_t, Weights>;
using Listing = std::map<std::pair<std::string_view, std::string_view>, Lines>;

// The source files found, by their recorded name: the path read ("" when none was found) and
// its lines, each file looked for and read once however many routines it holds.
struct Source {
  std::string path;
  std::vector<std::string> lines;
};
using Sources = std::map<std::string_view, Source>;

// The source file of `recorded`, found as pprof finds it: the path less a trim prefix (or,
// with none given, less everything up to a source directory's base name, and less
// /proc/self/cwd/); an absolute path must be there, a relative one is looked for under each
// source directory and their parents. "" when none is there.
std::string FindSource(std::string_view recorded, const SourceListOptions& o) {
  std::vector<std::string> dirs = o.source_path;
  if (dirs.empty()) {
    char cwd[4096];
    dirs.push_back(getcwd(cwd, sizeof cwd) ? cwd : ".");
  }
  std::string path(recorded);
  bool trimmed = false;
  if (o.trim_path.empty()) {
    for (const std::string& dir : dirs) {
      std::string want(1, '/');
      want.append(std::filesystem::path(dir).filename().string()).push_back('/');
      if (want.size() > 2 && path.find(want) != std::string::npos) {
        path.erase(0, path.find(want) + want.size());
        trimmed = true;
        break;
      }
    }
  }
  std::vector<std::string> prefixes = o.trim_path;
  prefixes.insert(prefixes.end(), {"/proc/self/cwd/./", "/proc/self/cwd/"});
  for (std::string t : prefixes) {
    if (trimmed) break;
    if (!t.ends_with('/')) t += '/';
    if (path.starts_with(t)) {
      path.erase(0, t.size());
      trimmed = true;
    }
  }
  auto readable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  if (path.starts_with('/')) return readable(path) ? path : "";
  for (const std::string& d : dirs) {
    for (std::filesystem::path dir(d);; dir = dir.parent_path()) {
      const std::string p = (dir / path).string();
      if (readable(p)) return p;
      if (dir.parent_path() == dir || dir.empty()) break;
    }
  }
  return "";
}

const Source& SourceOf(std::string_view recorded, const SourceListOptions& o, Sources* sources) {
  auto [it, fresh] = sources->try_emplace(recorded);
  if (fresh) {
    it->second.path = FindSource(recorded, o);
    std::ifstream in(it->second.path);
    for (std::string l; it->second.path.size() && std::getline(in, l);) {
      it->second.lines.push_back(std::move(l));
    }
  }
  return it->second;
}

std::string ValueOrDot(uint64_t v, int decimals, WeightUnit unit) {
  return v == 0 ? "." : AutoScaledValue(v, decimals, unit);
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// One routine: a function's lines in one file, with their context.
void WriteRoutine(std::string_view func, std::string_view recorded, const Lines& lines,
                  const StackTree& tree, uint64_t total, const SourceListOptions& o,
                  Sources* sources, BufferedWriter& out) {
  const int decimals = tree.decimals();
  const WeightUnit unit = tree.unit();
  uint64_t flat_sum = 0, cum_sum = 0;
  for (const auto& [line, w] : lines) {
    flat_sum = AddSat(flat_sum, w.flat);
    cum_sum = AddSat(cum_sum, w.cum);
  }
  const Source& source = SourceOf(recorded, o, sources);
  const std::string& path = source.path;
  std::string s = "ROUTINE ======================== ";
  s.append(func).append(" in ").append(path.empty() ? recorded : std::string_view(path));
  s += '\n';
  s.append(Pad(AutoScaledValue(flat_sum, decimals, unit), 10)).append(" ");
  s.append(Pad(AutoScaledValue(cum_sum, decimals, unit), 10)).append(" (flat, cum) ");
  s.append(ReportPercentage(cum_sum, total)).append(" of Total\n");
  if (path.empty()) {
    s.append(" Error: ").append(recorded).append(": no such file here");
    s += o.source_path.empty() ? " (give --source-path DIR)\n" : " or under --source-path\n";
    out.Append(s);
    return;
  }
  struct stat st;
  if (o.profile_mtime > 0 && stat(path.c_str(), &st) == 0 && st.st_mtime > o.profile_mtime) {
    s.append(" Note: ").append(path);
    s.append(" is newer than the profile: its lines may have moved\n");
  }
  const std::vector<std::string>& text = source.lines;
  const int64_t first = std::max<int64_t>(1, lines.begin()->first - kMargin);
  const int64_t last = lines.rbegin()->first + kMargin;
  for (int64_t n = first; n <= last && n <= static_cast<int64_t>(text.size()); ++n) {
    auto it = lines.find(n);
    const Weights w = it == lines.end() ? Weights{} : it->second;
    char num[32];
    std::snprintf(num, sizeof num, " %6lld:", static_cast<long long>(n));
    s += Pad(ValueOrDot(w.flat, decimals, unit), 10) + " " +
         Pad(ValueOrDot(w.cum, decimals, unit), 10) + num + text[static_cast<size_t>(n - 1)] +
         "\n";
  }
  out.Append(s);
}

}  // namespace

bool SplitSrclineFrame(std::string_view frame, std::string_view* func, std::string_view* file,
                       int64_t* line) {
  const size_t c2 = frame.rfind(':');
  if (c2 == std::string_view::npos || c2 + 1 == frame.size() || c2 == 0) return false;
  int64_t n = 0;
  for (char c : frame.substr(c2 + 1)) {
    if (c < '0' || c > '9' || n > (INT64_MAX - 9) / 10) return false;
    n = n * 10 + (c - '0');
  }
  const size_t c1 = frame.rfind(':', c2 - 1);
  if (n == 0 || c1 == std::string_view::npos || c1 == 0 || c1 + 1 == c2) return false;
  *func = frame.substr(0, c1);
  *file = frame.substr(c1 + 1, c2 - c1 - 1);
  *line = n;
  return true;
}

void WriteSourceList(const StackTree& profile, const CallGraphOptions& filters,
                     const SourceListOptions& o, BufferedWriter& out) {
  // A profile of several values per stack is listed by its default one (OneValue).
  StackTree view;
  const StackTree& tree = OneValueView(profile, &view);
  re2::RE2::Options ro;
  ro.set_log_errors(false);
  const re2::RE2 re(o.regex, ro);
  if (!re.ok()) throw UsageError("--list: bad regex '" + o.regex + "': " + re.error());
  // Each frame name once: its function matched or not, and its line.
  const Interner& names = tree.names();
  struct Frame {
    bool matched = false, has_line = false;
    std::string_view func, file;
    int64_t line = 0;
  };
  std::vector<Frame> frames(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    Frame& f = frames[i];
    std::string_view name = names.Name(StrId{static_cast<uint32_t>(i)});
    f.has_line = SplitSrclineFrame(name, &f.func, &f.file, &f.line);
    if (!f.has_line) f.func = name;
    f.matched = re2::RE2::PartialMatch(f.func, re);
  }
  PathWalker walker(tree, filters, FunctionPart);
  Listing listing;
  std::set<std::string_view> matched;
  uint64_t total = 0;
  std::vector<uint32_t> path;
  std::vector<std::tuple<std::string_view, std::string_view, int64_t>> on_path;
  for (NodeId n{1}; n.index() < tree.size(); ++n) {
    const uint64_t w = tree.self(n);
    if (w == 0 || (filters.skip_process && tree.parent(n) == StackTree::kRoot)) continue;
    total = AddSat(total, w);
    if (!walker.Path(n, &path)) continue;
    on_path.clear();
    for (uint32_t id : path) {
      const Frame& f = frames[id];
      if (!f.matched) continue;
      matched.insert(f.func);
      if (f.has_line) on_path.emplace_back(f.func, f.file, f.line);
    }
    std::sort(on_path.begin(), on_path.end());
    on_path.erase(std::unique(on_path.begin(), on_path.end()), on_path.end());
    for (const auto& [func, file, line] : on_path) {
      Weights& lw = listing[{func, file}][line];
      lw.cum = AddSat(lw.cum, w);
    }
    const Frame& leaf = frames[path.back()];
    if (leaf.matched && leaf.has_line) {
      Weights& lw = listing[{leaf.func, leaf.file}][leaf.line];
      lw.flat = AddSat(lw.flat, w);
    }
  }
  if (total > 0) walker.CheckMatched(filters);
  if (matched.empty()) throw Error("--list: no function matches '" + o.regex + "'");
  Sources sources;
  out.Append("Total: " + AutoScaledValue(total, tree.decimals(), tree.unit()) + "\n");
  for (std::string_view func : matched) {
    auto it = listing.lower_bound({func, std::string_view()});
    if (it == listing.end() || it->first.first != func) {
      out.Append("No source information for " + std::string(func) + "\n");
      continue;
    }
    for (; it != listing.end() && it->first.first == func; ++it) {
      WriteRoutine(func, it->first.second, it->second, tree, total, o, &sources, out);
    }
  }
}

}  // namespace pf
