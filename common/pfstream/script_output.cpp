// `perf script` text from a recording (script_output.h). Records are replayed in time order, as
// perf's ordered events deliver them; a sample is printed as perf 6.1 prints it (its header
// with the fields -F selects, in perf's widths, then the call chain, one frame a line), and the
// other records update the Session and are printed when --show-mmap-events or
// --show-task-events asks. The text is built with fixed formats into one buffer per sample, so
// it is byte-identical to perf's, which the tests check against perf itself.

#include "pfstream/script_output.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "base/error.h"
#include "base/prefetch.h"
#include "elf/elf_image.h"
#include "pfstream/records.h"
#include "pfstream/sample_layout.h"

namespace pf {

namespace {

// perf script's --max-stack default: the kernel's perf_event_max_stack default.
constexpr size_t kDefaultMaxStack = 127;

using sample_layout::kCallchain;
using sample_layout::kCpu;
using sample_layout::kTid;
using sample_layout::kTime;

// The fields perf script 6.1 knows (its -F usage, and machine_pid and vcpu, which it accepts
// without listing them) that pf does not print.
constexpr const char* kPerfOnlyFields[] = {
    "addr", "iregs", "uregs", "brstack", "brstacksym", "flags", "data_src", "weight",
    "bpf-output", "brstackinsn", "brstackinsnlen", "brstackoff", "callindent", "insn",
    "insnlen", "synth", "phys_addr", "metric", "misc", "srccode", "ipc", "tod",
    "data_page_size", "code_page_size", "ins_lat", "machine_pid", "vcpu"};

// perf's name for an event type in its messages (builtin-script.c's event_type).
const char* EventTypeName(uint32_t type) {
  switch (type) {
    case 0: return "hardware";
    case 1: return "software";
    case 2: return "tracepoint";
    case 3: return "hardware-cache";
    default: return "unknown";
  }
}

// Sets a field pf prints; false for a field perf knows and pf does not print (with the
// warning perf would give, or says pf does not print it). Throws on a name perf does not know.
bool Set(ScriptFields* f, const std::string& name, bool on, uint32_t event_type,
         std::string* warning) {
  if (name == "comm") f->comm = on;
  else if (name == "pid") f->pid = on;
  else if (name == "tid") f->tid = on;
  else if (name == "cpu") f->cpu = on;
  else if (name == "time") f->time = on;
  else if (name == "period") f->period = on;
  else if (name == "event") f->event = on;
  else if (name == "ip") f->ip = on;
  else if (name == "sym") f->sym = on;
  else if (name == "symoff") f->symoff = on;
  else if (name == "dso") f->dso = on;
  else if (name == "srcline") f->srcline = on;
  else if (name == "trace" && event_type == 2) f->trace = on;
  else if (name == "trace") {
    *warning = std::string("'trace' not valid for ") + EventTypeName(event_type) +
               " events. Ignoring.";
    return false;
  } else {
    for (const char* known : kPerfOnlyFields) {
      if (name != known) continue;
      // As perf: bpf-output does not apply to every event type.
      bool invalid = name == "bpf-output" && event_type != 1 && event_type != 2;
      *warning = "'" + name + (invalid ? std::string("' not valid for ") +
                                             EventTypeName(event_type) + " events. Ignoring."
                                       : "' is not printed by pf-script. Ignoring.");
      return false;
    }
    throw UsageError("-F: unknown field '" + name + "' (pf-script prints comm, pid, tid, cpu, "
                     "time, period, event, ip, sym, symoff, dso, srcline)");
  }
  return true;
}

}  // namespace

namespace {

template <typename... A>
void AppendF(std::string* out, const char* fmt, A... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out->append(buf, static_cast<size_t>(n));
  } else {
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), fmt, args...);
    big.pop_back();
    *out += big;
  }
}

// printf's "%*u" (or "%0*u", or "%-*u" with `left`) without printf: a sample's header.
void AppendDecimal(std::string* out, uint64_t v, size_t width, char fill = ' ', bool left = false) {
  char buf[20];
  size_t n = 0;
  do {
    buf[sizeof buf - ++n] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (!left && width > n) out->append(width - n, fill);
  out->append(buf + sizeof buf - n, n);
  if (left && width > n) out->append(width - n, ' ');
}

// A pid or tid as perf prints them, "%5d" ("-1" for a thread the kernel no longer names).
void AppendId(std::string* out, uint32_t id, bool left = false) {
  if (static_cast<int32_t>(id) >= 0) {
    AppendDecimal(out, id, 5, ' ', left);
    return;
  }
  AppendF(out, left ? "%-5d" : "%5d", static_cast<int32_t>(id));
}

// printf's "%*" PRIx64 without printf (two of them a frame; the frames are most of the text).
void AppendHex(std::string* out, uint64_t v, size_t width) {
  char buf[16];
  size_t n = 0;
  do {
    buf[sizeof buf - ++n] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  if (width > n) out->append(width - n, ' ');
  out->append(buf + sizeof buf - n, n);
}

// "%12s: " of SECONDS.MICROSECONDS, or with --ns "%5lu.%09llu: " (perf's two formats).
void AppendTime(std::string* out, uint64_t time, bool ns) {
  if (ns) {
    AppendDecimal(out, time / 1000000000, 5);
    *out += '.';
    AppendDecimal(out, time % 1000000000, 9, '0');
    out->append(": ");
    return;
  }
  char t[32];  // at most 20 + 1 + 6 characters
  size_t n = 0;
  do {
    t[31 - n++] = static_cast<char>('0' + (time / 1000) % 10);
    time /= 10;
  } while (n < 6);
  t[31 - n++] = '.';
  time /= 1000;  // the seconds (time was divided by 10 six times: 10^6 ns, then 10^3)
  do {
    t[31 - n++] = static_cast<char>('0' + time % 10);
    time /= 10;
  } while (time != 0);
  if (n < 12) out->append(12 - n, ' ');
  out->append(t + 32 - n, n);
  out->append(": ");
}

// Whether a sample is printed with its call chain (a frame a line).
bool PrintsChain(const Sample& s, const ScriptFields& f) {
  return (s.attr->sample_type & kCallchain) && !f.hide_call_graph;
}

void AppendFrame(const ResolvedFrame& fr, const ScriptFields& f, std::string* out) {
  bool any = false;
  if (f.ip) {
    AppendHex(out, fr.addr, 16);
    any = true;
  }
  if (f.sym) {
    if (any) *out += ' ';
    out->append(fr.sym);
    if (f.symoff && fr.has_sym) {
      out->append("+0x");
      AppendHex(out, fr.symoff, 0);
    }
    any = true;
  }
  if (f.dso && !fr.inlined) {
    if (any) *out += ' ';
    *out += '(';
    out->append(fr.dso);
    *out += ')';
  }
  // perf: the source line on a line of its own, then the inline mark.
  if (f.srcline && !fr.srcline.empty()) {
    out->append("\n  ");
    out->append(fr.srcline);
  }
  if (fr.inlined) out->append(" (inlined)");
}

}  // namespace

void AppendSampleHead(Session& session, const Sample& s, const ScriptFields& f, std::string* out) {
  bool chain = PrintsChain(s, f);
  if (f.comm) {
    std::string_view comm = session.Comm(s.pid, s.tid);
    if (f.ip && chain) {
      out->append(comm);
      *out += ' ';
    } else {
      AppendF(out, "%16.*s ", static_cast<int>(comm.size()), comm.data());
    }
  }
  if (f.pid && f.tid) {
    AppendId(out, s.pid);
    *out += '/';
    AppendId(out, s.tid, true);
    *out += ' ';
  } else if (f.pid || f.tid) {
    AppendId(out, f.pid ? s.pid : s.tid);
    *out += ' ';
  }
  if (f.cpu) {
    *out += '[';
    AppendDecimal(out, s.cpu, 3, '0');
    out->append("] ");
  }
  if (f.time) AppendTime(out, s.time, f.ns);
  if (f.period) {
    AppendDecimal(out, s.period, 10);
    *out += ' ';
  }
  if (f.event) {
    const std::string& name = s.attr->name;
    if (f.name_width > 0 && name.size() < static_cast<size_t>(f.name_width))
      out->append(static_cast<size_t>(f.name_width) - name.size(), ' ');
    out->append(name);
    out->append(": ");
  }
}

void AppendSampleText(Session& session, const Sample& s, std::span<const uint64_t> callchain,
                      const ScriptFields& f, std::vector<ResolvedFrame>* frames,
                      std::string* out) {
  session.Frames(s, callchain, frames);
  AppendResolvedSample(session, s, f, *frames, out);
}

void AppendResolvedSample(Session& session, const Sample& s, const ScriptFields& f,
                          const std::vector<ResolvedFrame>& frames, std::string* out) {
  // As perf script: a sample with a call chain field is printed as a chain, even an empty
  // one (a DWARF sample whose stack copy is empty has none).
  bool chain = PrintsChain(s, f) && !f.chain_unresolved;
  AppendSampleHead(session, s, f, out);
  if (f.trace && s.attr->trace) s.attr->trace->Print(s.attr->config, s.cpu, s.raw, out);
  if (chain && (f.ip || f.sym || f.dso)) {
    *out += '\n';
    for (const ResolvedFrame& fr : frames) {
      *out += '\t';
      AppendFrame(fr, f, out);
      *out += '\n';
    }
    *out += '\n';
  } else {
    if ((f.ip || f.sym || f.dso) && !frames.empty()) {
      *out += ' ';
      ResolvedFrame fr = frames[0];
      if (!fr.kernel) fr.addr = s.ip;  // without a callchain perf prints the raw ip
      AppendFrame(fr, f, out);
    }
    *out += '\n';
  }
}

void SetTracepointFields(ScriptFields* f, const EventAttr& a, bool pipe, bool fields_given) {
  // perf adds the frames to a tracepoint's fields when it has a call chain: in a file, only
  // when -F changed none of them; in a pipe, as each event arrives, whatever -F said.
  const bool chain = (a.sample_type & kCallchain) && (pipe || !fields_given);
  f->period = false;
  f->trace = true;
  f->ip = f->sym = chain;
  f->symoff = f->dso = chain && !pipe;
}

ScriptFields ResolveFields(const ScriptOptions& o, const EventAttr& a, bool pipe,
                           std::vector<std::string>* warnings) {
  ScriptFields f;
  f.cpu = a.sample_type & kCpu;
  f.period = a.has_period();
  f.time = a.sample_type & kTime;
  f.ns = o.ns;
  f.hide_call_graph = o.hide_call_graph;
  if (a.type == 2) SetTracepointFields(&f, a, pipe, !o.fields.empty());
  bool replace = !o.fields.empty() && o.fields[0].size() > 0 && o.fields[0][0] != '+' &&
                 o.fields[0][0] != '-';
  if (replace) {
    f = ScriptFields{false, false, false, false, false, false, false, false,
                     false, false, false, false, false, 0,     o.ns,  o.hide_call_graph};
  }
  bool unset_ip = false, unset_sym = false;
  for (std::string name : o.fields) {
    bool on = true;
    if (!name.empty() && (name[0] == '+' || name[0] == '-')) {
      on = name[0] == '+';
      name.erase(0, 1);
    }
    if (name.empty()) continue;
    std::string warning;
    if (!Set(&f, name, on, a.type, &warning)) {
      if (on && warnings) warnings->push_back(warning);
      continue;
    }
    if (on && name == "cpu" && !(a.sample_type & kCpu)) {
      throw UsageError("Samples for '" + a.name +
                       "' event do not have CPU attribute set. Cannot print 'cpu' field.");
    }
    if (on && name == "time" && !(a.sample_type & kTime)) {
      throw UsageError("Samples for '" + a.name +
                       "' event do not have TIME attribute set. Cannot print 'time' field.");
    }
    if (on && (name == "pid" || name == "tid") && !(a.sample_type & kTid)) {
      throw UsageError("Samples for '" + a.name + "' event do not have TID attribute set.");
    }
    if (!on && name == "ip") unset_ip = true;
    if (!on && name == "sym") unset_sym = true;
  }
  // In a pipe perf sets the fields as each event arrives, and adds the frames' addresses and
  // names to an event with a call chain whatever -F listed, unless it took them away.
  if (pipe && (a.sample_type & kCallchain)) {
    f.ip = f.ip || !unset_ip;
    f.sym = f.sym || !unset_sym;
  }
  return f;
}

void CheckFieldNames(const std::vector<std::string>& fields) {
  ScriptFields f;
  std::string warning;
  bool changes = false, list = false;
  for (std::string name : fields) {
    if (!name.empty() && (name[0] == '+' || name[0] == '-')) {
      changes = true;
      name.erase(0, 1);
    } else {
      list = true;
    }
    if (changes && list) {
      throw UsageError("-F: +FIELD and -FIELD change the default fields; they do not mix with "
                       "a list of fields");
    }
    if (!name.empty()) Set(&f, name, true, 1, &warning);
  }
}

namespace {

class Printer {
 public:
  Printer(PerfDataReader& reader, Session& session, const ScriptOptions& o, BufferedWriter& out)
      : reader_(reader), session_(session), o_(o), out_(out), select_(o.select) {
    select_.Bind(reader);
    for (const std::string& name : o.symbols) {
      // perf's -S: a name, or an address (strtoul's base 0) that is a symbol's start or the
      // sample's address.
      char* end = nullptr;
      uint64_t addr = std::strtoull(name.c_str(), &end, 0);
      if (!name.empty() && *end == '\0') symbol_addrs_.push_back(addr);
      symbols_.push_back(name);
    }
    std::sort(symbols_.begin(), symbols_.end());
  }

  // As perf's process_sample_event: the time ranges and CPUs first, then the thread (looked
  // up, which names a thread never seen), its comm, pid and tid, and the sampled symbol.
  void Sample(const Record& r) {
    pf::Sample s;
    if (!reader_.ParseSample(r, &s)) return;
    if (!select_.KeepsTimeAndCpu(s)) return;
    std::string_view comm = session_.Comm(s.pid, s.tid);
    if (!select_.KeepsThread(s, comm)) return;
    if (!symbols_.empty() && !SymbolSelected(s)) return;
    auto it = fields_.find(s.attr);
    if (it == fields_.end()) {
      ScriptFields f = ResolveFields(o_, *s.attr, reader_.pipe_mode(), &warnings_);
      for (const EventAttr& a : reader_.attrs()) {
        f.name_width = std::max(f.name_width, static_cast<int>(a.name.size()));
      }
      it = fields_.emplace(s.attr, f).first;
    }
    if (it->second.time) s.time = RelativeTime(s.time);
    line_.clear();
    // perf's unwinder refuses --max-stack 0, and the sample is printed as without a chain.
    constexpr uint64_t kStackCopy = (1 << 12) | (1 << 13);  // PERF_SAMPLE_REGS/STACK_USER
    const bool unwind_refused = o_.max_stack == 0 &&
                                (s.attr->sample_type & kStackCopy) == kStackCopy &&
                                !s.regs_user.empty() && !s.stack_user.empty();
    if (o_.hide_call_graph || unwind_refused) {
      // As perf -G: the sampled address alone, named without its inline frames.
      frames_.assign(1, session_.Resolve(s.pid, s.ip, Kernel(s)));
      ScriptFields f = it->second;
      f.chain_unresolved = unwind_refused;
      AppendResolvedSample(session_, s, f, frames_, &line_);
    } else {
      std::span<const uint64_t> chain = session_.Callchain(s, &chain_);
      if (o_.max_stack < kDefaultMaxStack) chain = LimitChain(s, chain);
      AppendSampleText(session_, s, chain, it->second, &frames_, &line_);
    }
    out_.Append(line_);
    ++samples_;
  }

  /// Warnings about fields asked for and not printed, each once.
  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const std::string& w : warnings_) {
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
    return out;
  }

  /// A record other than a sample (maps, tasks, ...): replayed into the Session, and printed
  /// when --show-mmap-events or --show-task-events asks for it.
  void SideBand(const Record& r) {
    session_.OnRecord(reader_, r);
    bool mmap = r.type == kRecordMmap || r.type == kRecordMmap2;
    bool task = r.type == kRecordComm || r.type == kRecordFork || r.type == kRecordExit;
    if (!(mmap && o_.show_mmap_events) && !(task && o_.show_task_events)) return;
    SampleId id;
    const EventAttr* attr = reader_.AttrFor(r.body, false);
    if (!attr && !reader_.attrs().empty()) attr = &reader_.attrs()[0];
    if (!reader_.ParseSampleId(r, &id, true) || !attr) return;
    // perf filters these records by CPU alone.
    pf::Sample at;
    at.cpu = id.cpu;
    if (!select_.KeepsTimeAndCpu(at)) return;
    line_.clear();
    // The sample-id prefix, printed as for a sample of the event (perf_sample__fprintf_start).
    ScriptFields f = ResolveFields(o_, *attr, reader_.pipe_mode(), &warnings_);
    // As perf: the comm is that of the thread the record is about (after the record).
    CommRecord c;
    ForkRecord fork;
    MmapRecord mm;
    uint32_t rec_pid = 0, rec_tid = 0;
    if (r.type == kRecordComm && ParseComm(r, &c)) {
      rec_pid = c.pid, rec_tid = c.tid;
    } else if (task && r.type != kRecordComm && ParseFork(r, &fork)) {
      rec_pid = fork.pid, rec_tid = fork.tid;
    } else if (mmap && ParseMmap(r, &mm)) {
      rec_pid = mm.pid, rec_tid = mm.tid;
    } else {
      return;  // cut short: the replay skipped it too
    }
    std::string_view comm = session_.Comm(rec_pid, rec_tid);
    if (f.comm) {
      if (f.ip && (attr->sample_type & kCallchain) && !f.hide_call_graph) {
        line_.append(comm);
        line_ += ' ';
      } else {
        AppendF(&line_, "%16.*s ", static_cast<int>(comm.size()), comm.data());
      }
    }
    if (f.pid && f.tid) {
      AppendF(&line_, "%5d/%-5d ", static_cast<int32_t>(id.pid), static_cast<int32_t>(id.tid));
    } else if (f.pid) {
      AppendF(&line_, "%5d ", static_cast<int32_t>(id.pid));
    } else if (f.tid) {
      AppendF(&line_, "%5u ", id.tid);
    }
    if (f.cpu) AppendF(&line_, "[%03u] ", id.cpu);
    if (f.time) AppendTime(&line_, RelativeTime(id.time), f.ns);
    switch (r.type) {
      case kRecordComm:
        AppendF(&line_, "PERF_RECORD_COMM%s: %.*s:%d/%d\n", c.exec ? " exec" : "",
                static_cast<int>(c.comm.size()), c.comm.data(), static_cast<int32_t>(c.pid),
                static_cast<int32_t>(c.tid));
        break;
      case kRecordFork:
      case kRecordExit:
        AppendF(&line_, "PERF_RECORD_%s(%d:%d):(%d:%d)\n",
                r.type == kRecordFork ? "FORK" : "EXIT", static_cast<int32_t>(fork.pid),
                static_cast<int32_t>(fork.tid), static_cast<int32_t>(fork.ppid),
                static_cast<int32_t>(fork.ptid));
        break;
      case kRecordMmap:
        AppendF(&line_,
                "PERF_RECORD_MMAP %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %.*s\n",
                static_cast<int32_t>(mm.pid), static_cast<int32_t>(mm.tid), mm.start, mm.len,
                mm.pgoff, (r.misc & (1 << 13)) ? 'r' : 'x', static_cast<int>(mm.filename.size()),
                mm.filename.data());
        break;
      default: {  // MMAP2
        char perms[5] = {(mm.prot & 1) ? 'r' : '-', (mm.prot & 2) ? 'w' : '-',
                         (mm.prot & 4) ? 'x' : '-', (mm.flags & 1) ? 's' : 'p',
                         0};  // PROT_READ/WRITE/EXEC, MAP_SHARED
        const int name_size = static_cast<int>(mm.filename.size());
        if (mm.has_build_id) {
          AppendF(&line_, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64
                  " <%s>]: %s %.*s\n", static_cast<int32_t>(mm.pid), static_cast<int32_t>(mm.tid),
                  mm.start, mm.len, mm.pgoff, elf::Hex(mm.build_id).c_str(), perms, name_size,
                  mm.filename.data());
        } else {
          AppendF(&line_, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64
                  " %02x:%02x %" PRIu64 " %" PRIu64 "]: %s %.*s\n", static_cast<int32_t>(mm.pid),
                  static_cast<int32_t>(mm.tid), mm.start, mm.len, mm.pgoff, mm.maj, mm.min, mm.ino,
                  mm.ino_generation, perms, name_size, mm.filename.data());
        }
        break;
      }
    }
    out_.Append(line_);
  }

  uint64_t samples() const { return samples_; }

 private:
  static bool Kernel(const pf::Sample& s) {
    uint16_t mode = s.misc & 7;  // PERF_RECORD_MISC_CPUMODE_MASK: KERNEL 1, GUEST_KERNEL 4
    return mode == 1 || mode == 4;
  }

  // --reltime: times from the first one printed (perf's initial_time).
  uint64_t RelativeTime(uint64_t t) {
    if (!o_.select.reltime) return t;
    if (initial_time_ == 0) initial_time_ = t;
    return t - initial_time_;
  }

  // perf's -S test, on the symbol of the sampled address (machine__resolve).
  bool SymbolSelected(const pf::Sample& s) {
    ResolvedFrame f = session_.Resolve(s.pid, s.ip, Kernel(s));
    if (f.has_sym) {
      if (std::binary_search(symbols_.begin(), symbols_.end(), f.sym)) return true;
      char start[24];
      std::snprintf(start, sizeof start, "0x%" PRIx64, s.ip - f.symoff);
      if (std::binary_search(symbols_.begin(), symbols_.end(), std::string_view(start))) {
        return true;
      }
    }
    return f.dso != "[unknown]" &&
           std::find(symbol_addrs_.begin(), symbol_addrs_.end(), s.ip) != symbol_addrs_.end();
  }

  // --max-stack, as perf resolves a chain: at most that many addresses of the recorded chain
  // (context markers not counted), and as many of the frames unwound from a stack copy.
  std::span<const uint64_t> LimitChain(const pf::Sample& s, std::span<const uint64_t> chain) {
    const size_t max = o_.max_stack;
    auto cut = [max](std::span<const uint64_t> part) {
      size_t n = 0, i = 0;
      for (; i < part.size() && n < max; ++i) n += part[i] < kContextMax;
      return part.first(i);
    };
    if (chain.data() == s.callchain.data()) return cut(chain);  // as recorded
    // Unwound: the recorded kernel part, PERF_CONTEXT_USER, the unwound frames.
    size_t user = 0;
    while (user < chain.size() && chain[user] != kContextUser) ++user;
    limited_.clear();
    std::span<const uint64_t> kernel = cut(chain.first(user));
    limited_.assign(kernel.begin(), kernel.end());
    if (user < chain.size()) {
      limited_.push_back(kContextUser);
      std::span<const uint64_t> unwound = chain.subspan(user + 1);
      limited_.insert(limited_.end(), unwound.begin(),
                      unwound.begin() + static_cast<std::ptrdiff_t>(std::min(max, unwound.size())));
    }
    return limited_;
  }

  PerfDataReader& reader_;
  Session& session_;
  const ScriptOptions& o_;
  BufferedWriter& out_;
  std::string line_;
  std::vector<ResolvedFrame> frames_;
  std::vector<uint64_t> chain_;
  std::map<const EventAttr*, ScriptFields> fields_;
  uint64_t samples_ = 0;
  SampleSelection select_;
  std::vector<std::string> symbols_;  // sorted
  std::vector<uint64_t> symbol_addrs_;
  std::vector<uint64_t> limited_;
  uint64_t initial_time_ = 0;
  std::vector<std::string> warnings_;
};

// A record ReplayOrdered holds back. Queued records live in one arena (8-byte aligned words),
// indexed by these small entries, which are sorted; no allocation per record.
struct QueuedRecord {
  uint64_t time, seq;
  size_t offset;        // in words, when copied into the arena
  const uint8_t* data;  // or the body itself, when it stays valid (a mapped file)
  uint32_t size;        // body bytes
  uint32_t type;
  uint16_t misc;
};

// Puts `queue` in time order (then arrival order), its first `sorted` entries being in order
// already (those the last flush left). Only the later entries are sorted, then merged with
// those (a round's later half stays queued for the next: sorting it again cost ~3%). They
// come as runs in time order (a round reads each CPU's buffer in turn), which are merged in
// pairs; more than kMergedRuns are sorted. `runs` is scratch.
void OrderQueue(std::vector<QueuedRecord>& queue, size_t sorted, std::vector<size_t>& runs) {
  constexpr size_t kMergedRuns = 64;
  auto before = [](const QueuedRecord& a, const QueuedRecord& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  };
  runs.assign(1, sorted);
  for (size_t i = sorted + 1; i < queue.size() && runs.size() <= kMergedRuns; ++i) {
    if (before(queue[i], queue[i - 1])) runs.push_back(i);
  }
  auto at = [&](size_t i) { return queue.begin() + static_cast<std::ptrdiff_t>(i); };
  if (runs.size() > kMergedRuns) {
    std::sort(at(sorted), queue.end(), before);
  } else {
    // Neighbouring runs merged in pairs, until one is left (runs: the m runs' bounds).
    runs.push_back(queue.size());
    while (runs.size() > 2) {
      const size_t m = runs.size() - 1;
      size_t kept = 0;
      for (size_t k = 0; k < m; k += 2) {
        if (k + 1 < m) std::inplace_merge(at(runs[k]), at(runs[k + 1]), at(runs[k + 2]), before);
        runs[kept++] = runs[k];
      }
      runs[kept++] = queue.size();
      runs.resize(kept);
    }
  }
  std::inplace_merge(queue.begin(), at(sorted), queue.end(), before);
}

}  // namespace

void ReplayOrdered(PerfDataReader& reader, const std::function<void(const Record&)>& deliver,
                   const std::function<void(const uint8_t*)>& release) {
  using Entry = QueuedRecord;
  std::vector<uint64_t> arena;
  std::vector<Entry> queue;
  size_t sorted = 0;  // queue's first entries, in order: those a flush left queued
  std::vector<size_t> runs;  // OrderQueue's scratch
  uint64_t seq = 0, round_max = 0, flush_limit = 0;
  auto flush = [&](uint64_t limit, bool all) {
    OrderQueue(queue, sorted, runs);
    size_t n = 0;
    for (; n < queue.size() && (all || queue[n].time <= limit); ++n) {
      const Entry& e = queue[n];
      // The next record's start, while this one is handled: a sample's fields, and the top of
      // its stack copy, where unwinding starts.
      if (n + 1 < queue.size() && queue[n + 1].data) {
        PrefetchBytes(queue[n + 1].data, std::min<size_t>(queue[n + 1].size, 1280));
      }
      Record r;
      r.type = e.type;
      r.misc = e.misc;
      r.body = std::span<const uint8_t>(
          e.data ? e.data : reinterpret_cast<const uint8_t*>(arena.data() + e.offset), e.size);
      r.stable = e.data != nullptr;
      deliver(r);
    }
    // A mapped file's pages before the earliest record still queued are done with.
    const uint8_t* keep = nullptr;
    if (n > 0 && queue[n - 1].data) keep = queue[n - 1].data + queue[n - 1].size;
    for (size_t i = n; i < queue.size(); ++i) {
      if (queue[i].data && (keep == nullptr || queue[i].data < keep)) keep = queue[i].data;
    }
    if (keep && release) {
      release(keep);
    } else if (keep) {
      reader.ReleaseBefore(keep);
    }
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
    sorted = queue.size();
    if (queue.empty()) {
      arena.clear();  // everything delivered: start the arena over
    } else if (arena.size() > (64u << 20) / 8) {
      // Compact: keep only what is still queued.
      std::vector<uint64_t> kept;
      for (Entry& e : queue) {
        if (e.data) continue;
        size_t words = (e.size + 7) / 8;
        size_t at = kept.size();
        kept.insert(kept.end(), arena.begin() + static_cast<std::ptrdiff_t>(e.offset),
                    arena.begin() + static_cast<std::ptrdiff_t>(e.offset + words));
        e.offset = at;
      }
      arena.swap(kept);
    }
  };
  Record r;
  while (reader.Next(&r)) {
    if (r.type == kRecordFinishedRound) {
      flush(flush_limit, false);
      flush_limit = round_max;
      continue;
    }
    uint64_t time = 0;
    if (r.type == kRecordSample) {
      if (!reader.SampleTime(r, &time)) time = 0;
    } else {
      SampleId id;
      if (reader.ParseSampleId(r, &id) && id.has_time) time = id.time;
    }
    round_max = std::max(round_max, time);
    if (r.stable) {
      queue.push_back({time, seq++, 0, r.body.data(), static_cast<uint32_t>(r.body.size()),
                       r.type, r.misc});
      continue;
    }
    size_t at = arena.size();
    arena.resize(at + (r.body.size() + 7) / 8);
    if (!r.body.empty()) std::memcpy(arena.data() + at, r.body.data(), r.body.size());
    queue.push_back({time, seq++, at, nullptr, static_cast<uint32_t>(r.body.size()), r.type,
                     r.misc});
  }
  flush(0, true);
}

uint64_t WriteScript(PerfDataReader& reader, Session& session, const ScriptOptions& o,
                     BufferedWriter& out, std::vector<std::string>* warnings) {
  Printer printer(reader, session, o, out);
  ReplayOrdered(reader, [&](const Record& r) {
    if (r.type == kRecordSample) {
      printer.Sample(r);
    } else {
      printer.SideBand(r);
    }
  });
  if (warnings) *warnings = printer.warnings();
  return printer.samples();
}

}  // namespace pf
