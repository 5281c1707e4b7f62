// Folding thread dumps (formats/thread_dumps.h). One loop reads the lines (ForEachLine,
// io/line_reader.h) and hands each to the format's rules, a small class per format with Line()
// and Finish(); they share the stack being read (DumpStack: frames leaf first, interned once,
// added to the tree root first when the stack ends).
//
// The rules are FlameGraph's scripts' regular expressions, written out by hand so they cost
// no regex engine per line; where a Perl regex could match in more than one way (the
// backtracking of stackcollapse-gdb.pl's `^#[0-9]* *([^ ]*) ([^ ]*) ([^ ]*) ([^ ]*)` over
// its spaces), the code takes the match Perl takes, said at each place. Their string
// building is kept too: a stack whose text is still empty stays empty when an empty name is
// added (the scripts test `$current eq ""`).

#include "formats/thread_dumps.h"

#include <vector>

#include "base/diagnostics.h"
#include "base/error.h"
#include "io/line_reader.h"

namespace pf {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }
// Perl's \s.
bool IsPerlSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The stack being read, leaf first.
class DumpStack {
 public:
  explicit DumpStack(StackTree& tree) : tree_(tree) {}
  /// The scripts' `$current = $current eq "" ? NAME : "NAME;$current"`.
  void PushString(std::string_view name) {
    if (frames_.empty() && name.empty()) return;
    Push(name);
  }
  /// The scripts' `unshift @stack, NAME` (jstack.pl).
  void Push(std::string_view name) { frames_.push_back(tree_.names().Intern(name)); }
  bool empty() const { return frames_.empty(); }
  void Clear() { frames_.clear(); }
  /// Adds the stack (under `root` when given) with weight 1, and clears it.
  void Flush(const std::string_view* root = nullptr) {
    path_.clear();
    if (root) path_.push_back(tree_.names().Intern(*root));
    path_.insert(path_.end(), frames_.rbegin(), frames_.rend());
    tree_.AddStack(path_, 1);
    ++stacks_;
    frames_.clear();
  }
  uint64_t stacks() const { return stacks_; }

 private:
  StackTree& tree_;
  std::vector<StrId> frames_;
  std::vector<StrId> path_;
  uint64_t stacks_ = 0;
};

// After '#': the frame number's digits.
size_t Digits(std::string_view s, size_t i = 0) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

// stackcollapse-elfutils.pl's /^#[0-9]* *0x[0-9a-f]*( (.*))?/: where its "0x" starts in
// `s` (the line after '#'), or npos. Perl finds it after the spaces or, when there are none,
// by giving back the number's last digit ("#10x..." is frame 1 at 0x...).
size_t EuStackAddress(std::string_view s) {
  size_t d = Digits(s);
  size_t i = d;
  while (i < s.size() && s[i] == ' ') ++i;
  if (s.substr(i, 2) == "0x") return i;
  if (i == d && d > 0 && s[d - 1] == '0' && d < s.size() && s[d] == 'x') return d - 1;
  return std::string_view::npos;
}

class EuStackRules {
 public:
  explicit EuStackRules(StackTree& tree) : stack_(tree) {}
  void Line(std::string_view line) {
    if (StartsWith(line, "PID ") || StartsWith(line, "TID ")) {
      ++recognised_;
      Flush();
    } else if (!line.empty() && line[0] == '#') {
      std::string_view s = line.substr(1);
      size_t at = EuStackAddress(s);
      if (at == std::string_view::npos) return;
      ++recognised_;
      size_t end = at + 2;
      while (end < s.size() && IsHex(s[end])) ++end;
      if (end < s.size() && s[end] == ' ') {
        stack_.PushString(s.substr(end + 1));
      } else {
        stack_.PushString("[unknown]");
      }
    }
  }
  void Finish(ReadReport*) { Flush(); }
  uint64_t recognised() const { return recognised_; }

 private:
  void Flush() {
    if (!stack_.empty()) stack_.Flush();
  }
  DumpStack stack_;
  uint64_t recognised_ = 0;
};

// stackcollapse-gdb.pl's /^#[0-9]* *([^ ]*) ([^ ]*) ([^ ]*) ([^ ]*)/ on `s`, the line after
// '#': false when it does not match, else *function is $3, or $1 when $1 holds no "0x".
// The four fields are blank-separated runs after the number and its spaces; Perl's
// backtracking, when fewer than three blanks follow the spaces, gives spaces back to the
// fields (as empty fields) until three blanks follow, and fails only when the whole line
// holds fewer than three.
bool GdbFunction(std::string_view s, std::string_view* function) {
  size_t d = Digits(s);
  size_t p = d;
  while (p < s.size() && s[p] == ' ') ++p;
  int after = 0;  // blanks after p, up to 3
  for (size_t i = p; i < s.size() && after < 3; ++i) after += s[i] == ' ';
  if (after < 3) {
    if (p - d < static_cast<size_t>(3 - after)) return false;
    p -= 3 - after;
  }
  std::string_view fields[3];
  for (std::string_view& f : fields) {
    size_t end = s.find(' ', p);
    f = s.substr(p, end - p);
    p = end + 1;
  }
  *function = fields[0].find("0x") != std::string_view::npos ? fields[2] : fields[0];
  return true;
}

class GdbRules {
 public:
  explicit GdbRules(StackTree& tree) : stack_(tree) {}
  void Line(std::string_view line) {
    std::string_view function;
    if (StartsWith(line, "Thread")) {
      ++recognised_;
      stack_.Clear();
    } else if (!line.empty() && line[0] == '#' && GdbFunction(line.substr(1), &function)) {
      ++recognised_;
      stack_.PushString(function);
    } else if (!stack_.empty()) {
      stack_.Flush();
    }
  }
  void Finish(ReadReport*) {
    if (!stack_.empty()) stack_.Flush();
  }
  uint64_t recognised() const { return recognised_; }

 private:
  DumpStack stack_;
  uint64_t recognised_ = 0;
};

// Perl's /java.lang.Thread.State: (\S+)/ ('.' any character): the state, or "".
std::string_view JstackState(std::string_view line) {
  static constexpr std::string_view kPattern = "java.lang.Thread.State: ";
  for (size_t i = line.find("State: "); i != std::string_view::npos;
       i = line.find("State: ", i + 1)) {
    if (i < 17) continue;
    size_t start = i - 17;
    bool ok = true;
    for (size_t k = 0; k < kPattern.size() && ok; ++k) {
      ok = kPattern[k] == '.' || line[start + k] == kPattern[k];
    }
    size_t from = i + 7, end = from;
    while (end < line.size() && !IsPerlSpace(line[end])) ++end;
    if (ok && end > from) return line.substr(from, end - from);
  }
  return {};
}

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// /C. CompilerThread/ and the other background threads stackcollapse-jstack.pl leaves out.
bool IsBackgroundThread(std::string_view name) {
  for (size_t i = name.find(" CompilerThread"); i != std::string_view::npos;
       i = name.find(" CompilerThread", i + 1)) {
    if (i >= 2 && name[i - 2] == 'C') return true;
  }
  return Contains(name, "Signal Dispatcher") || Contains(name, "Service Thread") ||
         Contains(name, "Attach Listener");
}

// /Socket.*accept0$/: "Socket", later "accept0" at the end.
bool IsSocketAccept(std::string_view f) {
  size_t s = f.find("Socket");
  return s != std::string_view::npos && EndsWith(f, "accept0") && s + 6 <= f.size() - 7;
}

class JstackRules {
 public:
  explicit JstackRules(StackTree& tree) : stack_(tree) {}
  void Line(std::string_view line) {
    if (!line.empty() && line[0] == '#') return;
    if (line.empty()) {
      EndThread();
      return;
    }
    if (line[0] == '"') {
      ++recognised_;
      std::string_view name = line.substr(1);
      name = name.substr(0, name.find('"'));
      // include-tname without include-tid: s/-\d+$//.
      std::string_view tname = name;
      size_t d = tname.size();
      while (d > 0 && IsDigit(tname[d - 1])) --d;
      if (d < tname.size() && d > 0 && tname[d - 1] == '-') tname = tname.substr(0, d - 1);
      tname_.assign(tname);
      has_tname_ = true;
      if (IsBackgroundThread(name)) state_ = kOther;  // "BACKGROUND"
      return;
    }
    if (std::string_view state = JstackState(line); !state.empty()) {
      ++recognised_;
      if (state_ == kUnset) state_ = state == "RUNNABLE" ? kRunnable : kOther;
      return;
    }
    size_t i = 0;
    while (i < line.size() && IsPerlSpace(line[i])) ++i;
    if (line.substr(i, 3) == "at ") {
      ++recognised_;
      std::string_view func = line.substr(i + 3);
      func = func.substr(0, func.find('('));
      stack_.Push(func);
      if (Contains(func, "epollWait") || Contains(func, "EPoll.wait")) state_ = kOther;
      if (EndsWith(func, "socketAccept") || IsSocketAccept(func) || EndsWith(func, "socketRead0")) {
        state_ = kOther;  // "NETWORK"
      }
    }
    // Else "- locked <0x...>", the dump's header and other lines the script skips.
  }
  void Finish(ReadReport* report) {
    // As the script: a thread not ended by a blank line is not counted.
    if (threads_ > kept_) {
      report->notices.push_back("kept the stacks of the " + Plural(kept_, "RUNNABLE thread", "RUNNABLE threads") +
                                " of " + std::to_string(threads_) +
                                " (as stackcollapse-jstack.pl; the others were waiting, "
                                "blocked or the JVM's own)");
    }
  }
  uint64_t recognised() const { return recognised_; }

 private:
  // The script's blank line: a RUNNABLE thread's stack, under its name, is counted even
  // when it has no frame (a named thread alone is a stack of one frame).
  void EndThread() {
    if (has_tname_ || !stack_.empty()) {
      ++threads_;
      if (state_ == kRunnable) {
        ++kept_;
        std::string_view root = tname_;
        stack_.Flush(has_tname_ ? &root : nullptr);
      }
    }
    stack_.Clear();
    has_tname_ = false;
    state_ = kUnset;
  }
  DumpStack stack_;
  std::string tname_;
  bool has_tname_ = false;
  // The script's $state: "?" (unset), RUNNABLE, or any other (a state the dump names,
  // or WAITING, NETWORK, BACKGROUND as the script sets them).
  enum State { kUnset, kRunnable, kOther };
  State state_ = kUnset;
  uint64_t recognised_ = 0, threads_ = 0, kept_ = 0;
};

template <typename Rules>
void ReadLines(ByteSource& source, Rules& rules, ReadReport* report) {
  SkipCount overlong =
      ForEachLine(source, [&](std::string_view line, uint64_t) { rules.Line(line); });
  rules.Finish(report);
  if (overlong.count) report->warnings.push_back(OverlongWarning(overlong));
}

template <typename Rules>
StackTree Read(ByteSource& source, ReadReport* report, const char* what) {
  StackTree tree(SampleType{"samples", WeightUnit::kSamples});
  Rules rules(tree);
  ReadLines(source, rules, report);
  if (rules.recognised() == 0) {
    throw Error(source.name(), std::string("no line of the input is ") + what);
  }
  return tree;
}

}  // namespace

StackTree ReadThreadDumps(ThreadDumpFormat format, ByteSource& source, ReadReport* report) {
  switch (format) {
    case ThreadDumpFormat::kEuStack:
      return Read<EuStackRules>(source, report,
                                "eu-stack output (`PID n`, `TID n:`, `#N 0xADDR NAME`)");
    case ThreadDumpFormat::kGdb:
      return Read<GdbRules>(source, report, "a gdb backtrace (`Thread ...`, `#N ...`)");
    case ThreadDumpFormat::kJstack:
      break;
  }
  return Read<JstackRules>(source, report,
                           "a jstack thread dump (`\"NAME\" ...`, `at CLASS.METHOD(...)`)");
}

bool IsEuStackPidLine(std::string_view line) {
  if (!StartsWith(line, "PID ")) return false;
  size_t d = Digits(line, 4);
  if (d == 4) return false;
  std::string_view rest = line.substr(d);
  return rest == " - process" || rest == " - core";
}

bool IsEuStackTidLine(std::string_view line) {
  if (!StartsWith(line, "TID ")) return false;
  size_t d = Digits(line, 4);
  return d > 4 && line.substr(d) == ":";
}

bool IsEuStackFrame(std::string_view line) {
  if (line.size() < 2 || line[0] != '#' || !IsDigit(line[1])) return false;
  size_t d = Digits(line, 1);
  size_t i = d;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i == d || line.substr(i, 2) != "0x") return false;
  i += 2;
  size_t h = i;
  while (i < line.size() && IsHex(line[i])) ++i;
  return i > h && (i == line.size() || line[i] == ' ');
}

bool IsGdbThreadLine(std::string_view line) {
  // "Thread 2 (Thread 0x7f0a (LWP 42) "name"):", "Thread 1 (process 42):".
  if (!StartsWith(line, "Thread ")) return false;
  size_t d = Digits(line, 7);
  if (d == 7) return false;
  return line.substr(d, 2) == " (" && EndsWith(line, "):");
}

bool IsGdbFrame(std::string_view line) {
  if (line.size() < 2 || line[0] != '#' || !IsDigit(line[1])) return false;
  size_t d = Digits(line, 1);
  size_t i = d;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i == d) return false;
  std::string_view rest = line.substr(i);
  // "0x... in FUNC (", or "FUNC (...) at FILE:LINE" / "FUNC (...) from LIB".
  if (StartsWith(rest, "0x")) {
    size_t sp = rest.find(' ');
    return sp != std::string_view::npos && rest.substr(sp, 4) == " in ";
  }
  size_t paren = rest.find(" (");
  return paren != std::string_view::npos && paren > 0 && rest.substr(0, paren).find(' ') ==
                                                             std::string_view::npos;
}

bool IsJstackLine(std::string_view line) {
  if (StartsWith(line, "Full thread dump ")) return true;
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i > 0 && StartsWith(line.substr(i), "java.lang.Thread.State: ") &&
         !JstackState(line).empty();
}

}  // namespace pf
