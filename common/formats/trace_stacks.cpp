// One reader for the tracing tools' stack texts (formats/trace_stacks.h).
//
// The shared shape is "frames, leaf first, then a count": a LeafFirst collects the frames
// of one stack as interned ids and, at the count, adds them root first to the tree. What
// differs per tool is small and lives in one line handler each:
// - DTrace (stackcollapse.pl): indented `module`func+0x1c` frames, an indented count; the
//   offset goes (from the last '+'), C++ arguments go (from the last '(' or '<' after the
//   first "::"), "a->b" is an inlined pair ("a;b_[i]"), ';' becomes ':', a leading 'L' goes.
//   Its three header lines are skipped when the first line is one (unindented, not blank).
// - SystemTap (stackcollapse-stap.pl): "0xADDR : func+0xb/0x10 [module]"; the text from the
//   last '+' on and up to the last " : " goes.
// - bcc profile/offcputime: kernel frames, "--" (with -d), user frames, the
//   "-                comm (pid)" line, the count. Reversed whole, this is exactly what
//   `profile -f` prints: comm;user...;-;kernel... (the delimiter "--" becomes "-", as -f
//   writes it, the pid goes). offcputime counts microseconds (its header says "(us)"):
//   pf keeps nanoseconds, so its counts are multiplied by 1000.
// - bpftrace: a map entry `@name[KEY]: N` whose key prints stacks as indented lines and
//   other values (comm, pid, ...) inline, separated by ", ". The key is one leaf-first list,
//   as stackcollapse-bpftrace.pl reads it: pf reverses it whole, every stack's frames
//   taken as printed ("spin+40", or "7f1e... __libc_read+13 (/lib/libc.so.6)" for
//   ustack(perf)), and a run of inline values as one frame ("9315, dd"). The Perl script's
//   ", " separator frames are not made. Several maps: each stack under a frame naming its map.
// Lines that are no part of a stack (headers, printf output) are passed over; an entry cut
// short or without a count is skipped and counted.

#include "formats/trace_stacks.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "io/line_reader.h"

namespace pf {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return s;
}

bool AllBlank(std::string_view s) { return TrimLeft(s).empty(); }

// Perl's /^\s*(\d+)+$/: optional leading blanks, then digits to the end.
bool ParseCountLine(std::string_view line, uint64_t* count) {
  std::string_view t = TrimLeft(line);
  if (t.empty()) return false;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *count);
  if (ec == std::errc::result_out_of_range) *count = UINT64_MAX;
  return true;
}

// Perl's s/\+[^+]*$//: drops the text from the last '+'.
std::string_view DropOffset(std::string_view s) {
  size_t plus = s.rfind('+');
  return plus == std::string_view::npos ? s : s.substr(0, plus);
}

// The frames of one stack, leaf first, until its count.
class LeafFirst {
 public:
  explicit LeafFirst(StackTree* tree) : tree_(tree) {}
  void Push(std::string_view frame) { frames_.push_back(tree_->names().Intern(frame)); }
  bool empty() const { return frames_.empty(); }
  void Clear() { frames_.clear(); }
  // The frames so far, named in `to` instead of `from` (the tree is being rebuilt).
  void Reintern(const StackTree& from, StackTree* to) {
    for (StrId& id : frames_) id = to->names().Intern(from.names().Name(id));
  }
  // Adds the stack root first with `weight` (under `root` when it is one) and starts a new one.
  void Finish(uint64_t weight, StrId root) {
    root_first_.clear();
    if (root.valid()) root_first_.push_back(root);
    root_first_.insert(root_first_.end(), frames_.rbegin(), frames_.rend());
    tree_->AddStack(root_first_, weight);
    frames_.clear();
  }

 private:
  StackTree* tree_;
  std::vector<StrId> frames_;
  std::vector<StrId> root_first_;
};

class TraceStacksReader {
 public:
  TraceStacksReader(InputFormat format, std::string name)
      : format_(format), name_(std::move(name)), stack_(&tree_) {}

  void Line(std::string_view line, uint64_t number) {
    switch (format_) {
      case InputFormat::kBpftrace:
        return Bpftrace(line, number);
      case InputFormat::kBcc:
        return Bcc(line);
      case InputFormat::kDtrace:
        return Dtrace(line, number);
      default:
        return Stap(line);
    }
  }

  StackTree Finish(ReadReport* report) {
    if (in_entry_ || !stack_.empty()) Skip(last_line_);  // cut short before its count
    report->samples += stacks_;
    if (skipped_) {
      report->warnings.push_back(name_ + ": " + std::to_string(skipped_) +
                                 (skipped_ == 1 ? " entry" : " entries") +
                                 " without a count skipped (the first at line " +
                                 std::to_string(first_skipped_ ? first_skipped_ : last_line_) +
                                 ")");
    }
    if (empty_) {
      report->warnings.push_back(name_ + ": " + std::to_string(empty_) +
                                 (empty_ == 1 ? " stack" : " stacks") +
                                 " without frames skipped (weight " +
                                 std::to_string(empty_weight_) + ")");
    }
    if (stacks_ == 0 && json_) {
      throw Error(name_, "this is bpftrace's JSON output (`bpftrace -f json`), which pf does not "
                         "read: run bpftrace without -f json");
    }
    if (stacks_ == 0 && empty_) {  // "@[]: 160": a kstack of a program in user space
      throw Error(name_, std::string("no stack with frames in this ") + FormatName(format_) +
                             ": " + std::to_string(empty_) +
                             (empty_ == 1 ? " entry" : " entries") + " without frames (weight " +
                             std::to_string(empty_weight_) + ")");
    }
    if (stacks_ == 0) {
      throw Error(name_, std::string("no stack with a count in this ") + FormatName(format_));
    }
    if (format_ == InputFormat::kBcc && microseconds_) {
      tree_.set_sample_type(0, SampleType{"off_cpu", WeightUnit::kNanoseconds});
    } else if (format_ != InputFormat::kBcc || samples_) {
      tree_.set_unit(WeightUnit::kSamples);
    }
    return std::move(tree_);
  }

  void set_last_line(uint64_t n) { last_line_ = n; }

 private:
  void Skip(uint64_t number) {
    if (!skipped_++) first_skipped_ = number;
  }

  void Stack(uint64_t count) {
    if (stack_.empty()) {  // "@[]: 74" (a kstack of user time), a count alone
      ++empty_;
      empty_weight_ = empty_weight_ + count < count ? UINT64_MAX : empty_weight_ + count;
      return;
    }
    if (format_ == InputFormat::kBpftrace) SelectMap(entry_map_);
    stack_.Finish(count, map_root_);
    ++stacks_;
  }

  // DTrace (stackcollapse.pl with its defaults).
  void Dtrace(std::string_view line, uint64_t number) {
    if (number <= 3 && header_) return;
    if (number == 1 && !line.empty() && !IsBlank(line[0])) {
      header_ = true;  // dtrace's "CPU ID FUNCTION:NAME", the probe line, a blank
      return;
    }
    uint64_t count;
    if (ParseCountLine(line, &count)) return Stack(count);
    if (AllBlank(line)) return;
    std::string_view f = DropOffset(TrimLeft(line));
    // C++ arguments: from the last '(' or '<' that follows the first "::" on.
    size_t scope = f.find("::");
    if (scope != std::string_view::npos) {
      size_t cut = f.find_last_of("(<");
      if (cut != std::string_view::npos && cut >= scope + 2) f = f.substr(0, cut);
    }
    if (f.empty()) f = "-";
    // "a->b": b inlined into a, in the order Perl's split gives (trailing empties dropped).
    // Pushed leaf first, so the group's last part goes first (Perl unshifts the group whole).
    if (f.find("->") == std::string_view::npos) return PushDtraceFunc(f, false);
    parts_.clear();
    for (size_t start = 0;;) {
      size_t arrow = f.find("->", start);
      parts_.push_back(f.substr(start, arrow == std::string_view::npos ? f.npos : arrow - start));
      if (arrow == std::string_view::npos) break;
      start = arrow + 2;
    }
    while (!parts_.empty() && parts_.back().empty()) parts_.pop_back();
    for (size_t i = parts_.size(); i-- > 0;) PushDtraceFunc(parts_[i], i > 0);
  }

  // One function of a DTrace frame: ';' becomes ':', a leading 'L' goes (Java), "_[i]" when
  // inlined. Copied only when it changes.
  void PushDtraceFunc(std::string_view func, bool inlined) {
    if (func.starts_with('L')) func.remove_prefix(1);
    if (!inlined && func.find(';') == std::string_view::npos) return stack_.Push(func);
    scratch_.assign(func);
    std::replace(scratch_.begin(), scratch_.end(), ';', ':');
    if (inlined) scratch_ += "_[i]";
    stack_.Push(scratch_);
  }

  // SystemTap (stackcollapse-stap.pl).
  void Stap(std::string_view line) {
    uint64_t count;
    if (ParseCountLine(line, &count)) return Stack(count);
    if (AllBlank(line)) return;
    std::string_view f = DropOffset(TrimLeft(line));
    size_t sep = f.rfind(" : ");
    if (sep != std::string_view::npos) f.remove_prefix(sep + 3);
    stack_.Push(f.empty() ? std::string_view("-") : f);
  }

  // bcc's profile and offcputime, as their -f writes them.
  void Bcc(std::string_view line) {
    if (line.empty() || !IsBlank(line[0])) {  // headers, warnings, "Detaching..."
      if (line.starts_with("Tracing off-CPU time (us)")) microseconds_ = true;
      if (line.starts_with("Sampling at ")) samples_ = true;
      return;
    }
    uint64_t count;
    if (ParseCountLine(line, &count)) {
      if (microseconds_) count = count > UINT64_MAX / 1000 ? UINT64_MAX : count * 1000;
      return Stack(count);
    }
    std::string_view f = TrimLeft(line);
    if (f.empty()) return;
    if (f == "--") f = "-";
    // "    %-16s %s (%d)": "-" padded to 16, a blank, the comm, its pid.
    constexpr std::string_view kComm = "-                ";
    if (f.starts_with(kComm) && f.size() > kComm.size() && f.back() == ')') {
      size_t open = f.rfind(" (");
      if (open != std::string_view::npos && open >= kComm.size()) {
        f = f.substr(kComm.size(), open - kComm.size());
      }
    }
    stack_.Push(f);
  }

  // bpftrace: "@name[" opens an entry, indented lines are frames, "]: N" ends it.
  void Bpftrace(std::string_view line, uint64_t number) {
    std::string_view rest = line;
    if (!in_entry_) {
      if (!line.starts_with("@")) {  // "Attaching 2 probes...", printf output
        json_ = json_ || line.starts_with("{\"type\": \"");
        return;
      }
      size_t i = 1;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                                 line[i] == '_')) {
        ++i;
      }
      if (i >= line.size() || line[i] != '[') return;  // "@total: 3": no key, no stack
      entry_map_ = line.substr(0, i);
      in_entry_ = true;
      entry_line_ = number;
      stack_.Clear();
      rest = line.substr(i + 1);
    } else if (!line.empty() && IsBlank(line[0])) {
      stack_.Push(TrimLeft(line));
      return;
    } else if (!line.empty() && line[0] != ',' && line[0] != ']') {
      // Neither a frame, nor a separator, nor the end: the entry was cut short (two runs in
      // one file, text printed into it). It is skipped and counted; the line may open the
      // next entry.
      in_entry_ = false;
      stack_.Clear();
      Skip(entry_line_);
      return Bpftrace(line, number);
    }
    // Separators and inline values, maybe the end "]: N".
    size_t end = rest.rfind("]: ");
    uint64_t count = 0;
    bool done = false, counted = false;
    if (end != std::string_view::npos) {
      std::string_view value = rest.substr(end + 3);
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
      counted = ec == std::errc() && p == value.data() + value.size() && !value.empty();
      done = true;
      rest = rest.substr(0, end);
    } else if (rest.ends_with("]:")) {  // hist() and lhist(): lines of buckets follow
      done = true;
      rest.remove_suffix(2);
    }
    InlineValues(rest);
    if (!done) return;
    in_entry_ = false;
    if (counted) {
      Stack(count);
    } else {
      stack_.Clear();
      Skip(entry_line_);
    }
  }

  // "9315, dd, ": runs of values between empty pieces (a stack's place) are one frame each.
  void InlineValues(std::string_view text) {
    std::string run;
    auto flush = [&] {
      if (!run.empty()) stack_.Push(run);
      run.clear();
    };
    while (true) {
      size_t sep = text.find(", ");
      std::string_view piece = text.substr(0, sep);
      if (piece.empty()) {
        flush();
      } else {
        if (!run.empty()) run += ", ";
        run += piece;
      }
      if (sep == std::string_view::npos) break;
      text.remove_prefix(sep + 2);
    }
    flush();
  }

  // The map `name` ("@" or "@name") of a stack read becomes the current one (maps without a
  // stack, such as hist()'s, do not count). Stacks of the first map go in
  // as they are; when a second map shows up, they move under a frame naming their map, and
  // every stack from then on goes under its map's.
  void SelectMap(std::string_view name) {
    if (first_map_.empty()) first_map_ = name;
    if (!several_maps_ && name == first_map_) return;
    if (!several_maps_) {
      several_maps_ = true;
      StackTree moved = tree_.EmptyLike();
      std::vector<StrId> path;
      tree_.ForEachStack([&](NodeId node, std::span<const NodeId> nodes) {
        path.assign(1, moved.names().Intern(first_map_));
        for (NodeId n : nodes) path.push_back(moved.names().Intern(tree_.name(n)));
        moved.AddStack(path, tree_.self(node));
      });
      stack_.Reintern(tree_, &moved);
      tree_ = std::move(moved);
    }
    map_root_ = tree_.names().Intern(name);
  }

  InputFormat format_;
  std::string name_;
  StackTree tree_;
  LeafFirst stack_;
  uint64_t stacks_ = 0;
  uint64_t empty_ = 0;         // stacks without frames, skipped
  uint64_t empty_weight_ = 0;  // their weight
  uint64_t skipped_ = 0;
  uint64_t first_skipped_ = 0;
  uint64_t last_line_ = 0;
  bool header_ = false;        // DTrace: the first three lines are its header
  bool microseconds_ = false;  // bcc: offcputime's header
  bool samples_ = false;       // bcc: profile's header
  bool in_entry_ = false;      // bpftrace: inside "@[...]"
  bool json_ = false;          // bpftrace: a line of its -f json output
  uint64_t entry_line_ = 0;
  std::vector<std::string_view> parts_;  // DTrace: a frame's "->" parts
  std::string scratch_;                  // DTrace: a function rewritten
  std::string entry_map_;     // bpftrace: the map of the entry being read
  std::string first_map_;     // bpftrace: the first map's name
  bool several_maps_ = false;  // bpftrace: a second map showed up
  StrId map_root_ = StrId::Invalid();  // bpftrace: the current map's frame, once there are several
};

}  // namespace

bool IsTraceStacks(InputFormat format) {
  return format == InputFormat::kBpftrace || format == InputFormat::kBcc ||
         format == InputFormat::kDtrace || format == InputFormat::kStap;
}

StackTree ReadTraceStacks(InputFormat format, ByteSource& source, ReadReport* report) {
  if (!IsTraceStacks(format)) throw Error(source.name(), "not a tracing tool's stack text");
  TraceStacksReader reader(format, source.name());
  uint64_t last = 0;
  SkipCount overlong = ForEachLine(source, [&](std::string_view line, uint64_t number) {
    reader.Line(line, number);
    last = number + 1;
  });
  reader.set_last_line(last);
  if (overlong.count) report->warnings.push_back(OverlongWarning(overlong));
  return reader.Finish(report);
}

}  // namespace pf
