// Format sniffing. perf.data is known by its magic, binary data by NUL bytes or control
// characters. Text is first checked against the documented shapes of the other profilers'
// outputs users are likely to feed pf (see sniff.h; some have lines that would parse as
// folded, such as callgrind's "version: 1"); otherwise its first meaningful line decides: a
// folded line ends in a count after a blank, which a perf script event line (ending in
// "event:") or frame line (ending in "(dso)") never does. What is neither is read as perf
// script text, whose folder then reports whether anything parsed.

#include "formats/sniff.h"

#include <cctype>

#include "formats/cpuprofile.h"
#include "formats/gperftools.h"
#include "formats/perf_script.h"
#include "formats/pprof.h"
#include "formats/thread_dumps.h"
#include "io/line_reader.h"
#include "stacks/folded.h"

namespace pf {

namespace {

// Binary: NUL bytes, or many control characters other than common whitespace.
bool LooksBinary(std::string_view head) {
  std::string_view sample = head.substr(0, 64 << 10);
  size_t control = 0;
  for (char ch : sample) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0) return true;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') ++control;
  }
  return control * 20 > sample.size();  // over 5%
}

bool IsWhite(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsWhite(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsWhite(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A DTrace stack frame: indented "module`function+0x1c", one word with a backquote.
bool IsDtraceFrame(std::string_view line) {
  if (line.empty() || !IsWhite(line[0])) return false;
  std::string_view t = Trim(line);
  if (t.empty() || t.find('`') == std::string_view::npos) return false;
  for (char c : t) {
    if (IsWhite(c)) return false;
  }
  return true;
}

// bpftrace's first line: "Attaching 1 probe..." or "Attaching 12 probes...".
bool IsBpftraceHeader(std::string_view t) {
  if (!StartsWith(t, "Attaching ")) return false;
  t.remove_prefix(10);
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  t.remove_prefix(digits);
  return digits > 0 && (t == " probe..." || t == " probes...");
}

// bpftrace's -f json output: one object a line, {"type": "attached_probes", "data": ...}.
bool LooksBpftraceJson(std::string_view head) {
  std::string_view t = Trim(head.substr(0, 4096));
  return StartsWith(t, "{\"type\": \"") && t.find("\"data\": ") != std::string_view::npos;
}

// JSON (speedscope, Chrome trace events, Firefox profiles, gprof2dot's schema): an object,
// or an array whose first element is a value.
bool LooksJson(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && IsWhite(head[i])) ++i;
  if (i >= head.size()) return false;
  if (head[i] == '{') {
    ++i;
    while (i < head.size() && IsWhite(head[i])) ++i;
    return i < head.size() && (head[i] == '"' || head[i] == '}');
  }
  if (head[i] != '[') return false;
  ++i;
  while (i < head.size() && IsWhite(head[i])) ++i;
  return i < head.size() && std::string_view("{[\"]").find(head[i]) != std::string_view::npos;
}

// Whether the first meaningful line is a folded stack.
bool FirstLineIsFolded(std::string_view head) {
  LineSplitter lines(head);
  std::string_view line;
  FoldedLine fl;
  while (lines.Next(&line)) {
    if (!IsFoldedIgnorable(line)) return ParseFoldedLine(line, 0, &fl);
  }
  return false;
}

// gperftools' profiles (formats/gperftools.h): the CPU profiler's binary header (five words
// 0, 3, 0, PERIOD, 0), the heap profiler's "heap profile: N: B [M: A] @ heap..." first line.
InputFormat SniffGperftools(std::string_view head) {
  if (IsGperftoolsCpu(head)) return InputFormat::kGperftoolsCpu;
  if (IsGperftoolsHeap(head)) return InputFormat::kGperftoolsHeap;
  return InputFormat::kEmpty;
}

// Thread dumps (eu-stack, gdb, jstack) and .cpuprofile JSON, recognised by their structure
// (formats/thread_dumps.h, formats/cpuprofile.h): eu-stack by a `PID n - process` or
// `TID n:` line before a `#N  0xADDR` frame, gdb by a `Thread N (...):` line followed by a
// `#N` frame, jstack by "Full thread dump" or an indented `java.lang.Thread.State:` line, a
// .cpuprofile by its "nodes". kEmpty when none. None of these lines is a folded stack
// (which ends in a count), so folded text, even with some malformed lines, is not taken;
// a dump may follow other lines (a JVM's log before its kill -3 dump).
InputFormat SniffThreadDumpOrCpuProfile(std::string_view head) {
  if (LooksLikeCpuProfile(head)) return InputFormat::kCpuProfile;
  LineSplitter lines(head.substr(0, 256 << 10));
  std::string_view line, previous;
  bool eu_stack_header = false;
  // (No cap on lines within the 256 KiB: gdb prints a "[New LWP n]" line per thread first.)
  while (lines.Next(&line)) {
    if (IsEuStackPidLine(line) || IsEuStackTidLine(line)) {
      eu_stack_header = true;
    } else if (eu_stack_header && IsEuStackFrame(line)) {
      return InputFormat::kEuStack;
    }
    if (IsGdbThreadLine(previous) && IsGdbFrame(line)) return InputFormat::kGdb;
    if (IsJstackLine(line)) return InputFormat::kJstack;
    previous = line;
  }
  return InputFormat::kEmpty;
}

// valgrind's massif and callgrind files, by their headers: massif's `desc:`, `cmd:`,
// `time_unit:` lines, in that order, first; callgrind's "# callgrind format" first line
// (cachegrind's too: the same format), or, as older callgrind and cachegrind write no such
// line, an `events:` header line and an `fn=` line among the first lines. kEmpty: neither.
InputFormat SniffValgrind(std::string_view head) {
  LineSplitter lines(head.substr(0, 256 << 10));
  std::string_view line;
  size_t n = 0;
  int massif = 0;  // massif's header lines seen in order
  bool events = false, fn = false;
  while (lines.Next(&line) && n < 400) {
    ++n;
    if (n == 1 && (StartsWith(line, "# callgrind format") || StartsWith(line, "# cachegrind format"))) {
      return InputFormat::kCallgrind;
    }
    if ((massif == 0 && StartsWith(line, "desc:")) || (massif == 1 && StartsWith(line, "cmd:"))) {
      ++massif;
      continue;
    }
    if (massif == 2 && StartsWith(line, "time_unit:")) return InputFormat::kMassif;
    if (massif == 1 && StartsWith(line, "desc:")) continue;  // several --massif options
    massif = 3;  // not massif's header
    if (StartsWith(line, "events: ")) events = true;
    if (StartsWith(line, "fn=")) fn = true;
    if (events && fn) return InputFormat::kCallgrind;
  }
  return InputFormat::kEmpty;
}

// The tracing tools' stack texts (formats/trace_stacks.h), by structure: a bpftrace map
// entry ("@[" or "@name[" opening a line, "]: N" ending one), bcc's comm line
// ("    -                comm (pid)") or header with a count line, DTrace's header or
// backquoted frames, SystemTap's "0xADDR : func+0x1/0x2 [module]" frames with a count line.
// Folded lines and perf script samples have none of these. kEmpty when none.
InputFormat SniffTraceStacks(std::string_view head) {
  LineSplitter lines(head.substr(0, 256 << 10));
  std::string_view line;
  size_t n = 0, dtrace_frames = 0, stap_frames = 0, perf_frames = 0;
  size_t counts = 0, bare_counts = 0;
  bool bpf_open = false, bpf_close = false, bcc_comm = false, bcc_header = false;
  bool dtrace_header = false;
  // bpftrace: inside an entry opened by "@[" or "@name[" alone, only indented frames so far
  // (a first entry of deep stacks with long C++ names may outlast the window).
  bool bpf_entry = false;
  bool bpf_header = false;  // "Attaching 2 probes...", even with no map entry after it
  size_t bpf_frames = 0;
  StackLine sl;
  while (lines.Next(&line) && n < 400) {
    ++n;
    std::string_view t = Trim(line);
    if (bpf_entry && !line.empty() && IsWhite(line[0]) && !t.empty()) {
      ++bpf_frames;
    } else if (bpf_entry) {
      bpf_entry = false;
    }
    if (!t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos) {
      if (IsWhite(line[0])) {
        ++counts;
      } else {
        ++bare_counts;  // SystemTap scripts may print their counts with "%d\n"
      }
      continue;
    }
    if (n == 1 && (StartsWith(line, "Tracing off-CPU time (us)") ||
                   (StartsWith(line, "Sampling at ") && t.find(" stack") != t.npos))) {
      bcc_header = true;
    }
    if (n == 1 && IsBpftraceHeader(t)) bpf_header = true;
    if (n <= 2 && StartsWith(t, "CPU") && t.find("FUNCTION:NAME") != std::string_view::npos) {
      dtrace_header = true;
    }
    if (line.size() > 1 && line[0] == '@') {
      size_t i = 1;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                                 line[i] == '_')) {
        ++i;
      }
      if (i < line.size() && line[i] == '[') {
        bpf_open = true;
        if (i + 1 == Trim(line).size()) {
          bpf_entry = true;
          bpf_frames = 0;
        }
      }
    }
    if (bpf_open) {
      size_t end = line.rfind("]: ");
      if (end != std::string_view::npos && end + 3 < line.size() &&
          line.substr(end + 3).find_first_not_of("0123456789") == std::string_view::npos) {
        bpf_close = true;
      }
    }
    if (StartsWith(line, "    -                ") && line.size() > 21 && line.back() == ')' &&
        !IsWhite(line[21])) {
      bcc_comm = true;
    }
    if (IsDtraceFrame(line)) ++dtrace_frames;
    if (!line.empty() && IsWhite(line[0]) && StartsWith(t, "0x") && t.find(" : ") != std::string_view::npos) {
      ++stap_frames;
    }
    if (!line.empty() && IsWhite(line[0]) && MatchStackLine(line, &sl)) ++perf_frames;
  }
  if (bpf_header || (bpf_open && (bpf_close || (bpf_entry && bpf_frames >= 2)))) {
    return InputFormat::kBpftrace;
  }
  // (Their headers are printed only without -f; a first stack of long C++ names may hide the
  // comm line and count from the window.)
  if (bcc_comm || bcc_header) return InputFormat::kBcc;
  if (dtrace_header || (dtrace_frames >= 2 && perf_frames == 0)) return InputFormat::kDtrace;
  if (perf_frames == 0 && stap_frames >= 2 && (counts || bare_counts)) return InputFormat::kStap;
  return InputFormat::kEmpty;
}

}  // namespace

const char* SniffForeignFormat(std::string_view head) {
  if (LooksBpftraceJson(head)) {
    return "bpftrace's JSON output (`bpftrace -f json`; pf reads its default text output)";
  }
  // (A folded stack may start with a bracket: "[[vdso]];f 3".)
  if (LooksJson(head) && !FirstLineIsFolded(head)) {
    return "JSON (a speedscope, Chrome or Firefox profile?)";
  }
  std::string_view start = Trim(head.substr(0, 256));
  if (StartsWith(start, "<?xml") || StartsWith(start, "<!DOCTYPE")) {
    return "XML (a Sysprof or Instruments profile?)";
  }
  LineSplitter lines(head.substr(0, 256 << 10));
  std::string_view line;
  size_t n = 0, dtrace_frames = 0, perf_frames = 0;
  StackLine sl;
  while (lines.Next(&line) && n < 400) {
    ++n;
    std::string_view t = Trim(line);
    if (StartsWith(t, "Analysis of sampling ")) return "a macOS `sample` report";
    if (StartsWith(t, "# Overhead ") || StartsWith(t, "# Children ")) {
      return "`perf report` output (give pf `perf script` output, or the perf.data file)";
    }
    if (t == "Flat profile:" || StartsWith(t, "Call graph (explanation follows)")) {
      return "gprof output";
    }
    if (StartsWith(t, "CPU") && t.find("FUNCTION:NAME") != std::string_view::npos) {
      return "DTrace output (-f dtrace)";
    }
    if (IsDtraceFrame(line)) ++dtrace_frames;
    if (!line.empty() && IsWhite(line[0]) && MatchStackLine(line, &sl)) ++perf_frames;
  }
  if (dtrace_frames >= 2 && perf_frames == 0) {
    return "DTrace output (-f dtrace)";
  }
  return nullptr;
}

InputFormat SniffFormat(std::string_view head, std::string* foreign) {
  if (head.empty()) return InputFormat::kEmpty;
  if (head.substr(0, 8) == "PERFILE2" || head.substr(0, 8) == "2ELIFREP") {
    return InputFormat::kPerfData;
  }
  // pprof's profile.proto: binary, recognised by its structure (formats/pprof.h).
  if (LooksLikePprof(head.substr(0, 64 << 10))) return InputFormat::kPprof;
  if (InputFormat g = SniffGperftools(head); g != InputFormat::kEmpty) return g;
  if (LooksBinary(head)) return InputFormat::kBinary;
  if (InputFormat vg = SniffValgrind(head); vg != InputFormat::kEmpty) return vg;
  if (InputFormat f = SniffThreadDumpOrCpuProfile(head); f != InputFormat::kEmpty) return f;
  // Stack text of tracing tools (bpftrace, bcc, DTrace, SystemTap) pf reads.
  InputFormat trace = SniffTraceStacks(head);
  if (trace != InputFormat::kEmpty) return trace;
  // Another profiler's output first: some have lines that parse as folded ("version: 1").
  if (const char* what = SniffForeignFormat(head)) {
    if (foreign) *foreign = what;
    return InputFormat::kForeign;
  }
  // The first meaningful line decides between folded stacks and perf script text (or
  // only comments and blank lines).
  return FirstLineIsFolded(head) ? InputFormat::kFolded : InputFormat::kPerfScript;
}

static_assert(std::size(kInputFormatNames) ==
                  3 + static_cast<size_t>(InputFormat::kCpuProfile) -
                      static_cast<size_t>(InputFormat::kPprof) + 1,
              "one name in base/input_formats.h per InputFormat pf reads");

InputFormat FormatFromName(std::string_view canonical) {
  if (canonical == "perf-script") return InputFormat::kPerfScript;
  if (canonical == "folded") return InputFormat::kFolded;
  if (canonical == "perf-data") return InputFormat::kPerfData;
  // The others follow the table's order from "pprof" on.
  int k = static_cast<int>(InputFormat::kPprof);
  bool others = false;
  for (const InputFormatName& f : kInputFormatNames) {
    others = others || std::string_view(f.name) == "pprof";
    if (!others) continue;
    if (canonical == f.name) return static_cast<InputFormat>(k);
    ++k;
  }
  return InputFormat::kEmpty;
}

const char* FormatName(InputFormat f) {
  if (f >= InputFormat::kPprof) {
    size_t k = 3 + (static_cast<size_t>(f) - static_cast<size_t>(InputFormat::kPprof));
    return k < std::size(kInputFormatNames) ? kInputFormatNames[k].what : "?";
  }
  switch (f) {
    case InputFormat::kEmpty:
      return "empty";
    case InputFormat::kPerfScript:
      return "perf script text";
    case InputFormat::kFolded:
      return "folded stacks";
    case InputFormat::kPerfData:
      return "perf.data";
    case InputFormat::kBinary:
      return "binary data";
    case InputFormat::kForeign:
      return "another profiler's output";
    default:
      break;
  }
  return "?";
}

}  // namespace pf
