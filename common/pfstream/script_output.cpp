#include "pfstream/script_output.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "base/error.h"
#include "base/prefetch.h"
#include "base/teardown.h"

namespace pf {

namespace {

constexpr uint64_t kSampleTid = 1 << 1, kSampleTime = 1 << 2, kSampleCpu = 1 << 7,
                   kSamplePeriod = 1 << 8, kSampleCallchain = 1 << 5;

void Set(ScriptFields* f, const std::string& name, bool on) {
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
  else throw UsageError("-F: unknown field '" + name + "' (comm, pid, tid, cpu, time, period, "
                        "event, ip, sym, symoff, dso, srcline)");
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
  bool chain = s.attr->sample_type & kSampleCallchain;
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
    AppendDecimal(out, s.pid, 5);
    *out += '/';
    AppendDecimal(out, s.tid, 5, ' ', true);
    *out += ' ';
  } else if (f.pid || f.tid) {
    AppendDecimal(out, f.pid ? s.pid : s.tid, 5);
    *out += ' ';
  }
  if (f.cpu) {
    *out += '[';
    AppendDecimal(out, s.cpu, 3, '0');
    out->append("] ");
  }
  if (f.time) {
    // "%12s: " of SECONDS.MICROSECONDS
    std::string t;
    AppendDecimal(&t, s.time / 1000000000, 0);
    t += '.';
    AppendDecimal(&t, (s.time % 1000000000) / 1000, 6, '0');
    if (t.size() < 12) out->append(12 - t.size(), ' ');
    out->append(t);
    out->append(": ");
  }
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
  bool chain = s.attr->sample_type & kSampleCallchain;
  AppendSampleHead(session, s, f, out);
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

ScriptFields ResolveFields(const ScriptOptions& o, const EventAttr& a) {
  ScriptFields f;
  f.cpu = a.sample_type & kSampleCpu;
  f.period = a.sample_type & kSamplePeriod;
  f.time = a.sample_type & kSampleTime;
  bool replace = !o.fields.empty() && o.fields[0].size() > 0 && o.fields[0][0] != '+' &&
                 o.fields[0][0] != '-';
  if (replace) f = ScriptFields{false, false, false, false, false, false, false,
                                false, false, false, false, false};
  for (std::string name : o.fields) {
    bool on = true;
    if (!name.empty() && (name[0] == '+' || name[0] == '-')) {
      on = name[0] == '+';
      name.erase(0, 1);
    }
    if (name.empty()) continue;
    Set(&f, name, on);
    if (on && name == "cpu" && !(a.sample_type & kSampleCpu)) {
      throw UsageError("Samples for '" + a.name +
                       "' event do not have CPU attribute set. Cannot print 'cpu' field.");
    }
    if (on && name == "time" && !(a.sample_type & kSampleTime)) {
      throw UsageError("Samples for '" + a.name +
                       "' event do not have TIME attribute set. Cannot print 'time' field.");
    }
    if (on && (name == "pid" || name == "tid") && !(a.sample_type & kSampleTid)) {
      throw UsageError("Samples for '" + a.name + "' event do not have TID attribute set.");
    }
  }
  return f;
}

namespace {

class Printer {
 public:
  Printer(PerfDataReader& reader, Session& session, const ScriptOptions& o, BufferedWriter& out)
      : reader_(reader), session_(session), o_(o), out_(out) {}

  void Sample(const Record& r) {
    pf::Sample s;
    if (!reader_.ParseSample(r, &s)) return;
    auto it = fields_.find(s.attr);
    if (it == fields_.end()) {
      ScriptFields f = ResolveFields(o_, *s.attr);
      for (const EventAttr& a : reader_.attrs()) {
        f.name_width = std::max(f.name_width, static_cast<int>(a.name.size()));
      }
      it = fields_.emplace(s.attr, f).first;
    }
    line_.clear();
    AppendSampleText(session_, s, session_.Callchain(s, &chain_), it->second, &frames_, &line_);
    out_.Append(line_);
    ++samples_;
  }

  void Other(const Record& r) {
    session_.OnRecord(reader_, r);
    bool mmap = r.type == kRecordMmap || r.type == kRecordMmap2;
    bool task = r.type == kRecordComm || r.type == kRecordFork || r.type == kRecordExit;
    if (!(mmap && o_.show_mmap_events) && !(task && o_.show_task_events)) return;
    SampleId id;
    const EventAttr* attr = reader_.AttrFor(r.body, false);
    if (!attr && !reader_.attrs().empty()) attr = &reader_.attrs()[0];
    if (!reader_.ParseSampleId(r, &id, true) || !attr) return;
    line_.clear();
    // The sample-id prefix, printed as for a sample of the event (perf_sample__fprintf_start).
    ScriptFields f = ResolveFields(o_, *attr);
    // As perf: the comm is that of the thread the record is about (after the record).
    uint32_t rec_pid = 0, rec_tid = 0;
    if (r.body.size() >= 16) {
      std::memcpy(&rec_pid, r.body.data(), 4);
      std::memcpy(&rec_tid, r.body.data() + (r.type == kRecordFork || r.type == kRecordExit ? 8 : 4), 4);
    }
    std::string_view comm = session_.Comm(rec_pid, rec_tid);
    if (f.comm) {
      if (f.ip && (attr->sample_type & kSampleCallchain)) {
        line_.append(comm);
        line_ += ' ';
      } else {
        AppendF(&line_, "%16.*s ", static_cast<int>(comm.size()), comm.data());
      }
    }
    if (f.pid && f.tid) {
      AppendF(&line_, "%5u/%-5u ", id.pid, id.tid);
    } else if (f.pid) {
      AppendF(&line_, "%5u ", id.pid);
    } else if (f.tid) {
      AppendF(&line_, "%5u ", id.tid);
    }
    if (f.cpu) AppendF(&line_, "[%03u] ", id.cpu);
    if (f.time) {
      char t[48];
      std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, id.time / 1000000000,
                    (id.time % 1000000000) / 1000);
      AppendF(&line_, "%12s: ", t);
    }
    const uint8_t* b = r.body.data();
    size_t n = r.body.size();
    auto u32 = [&](size_t at) {
      uint32_t v = 0;
      if (at + 4 <= n) std::memcpy(&v, b + at, 4);
      return v;
    };
    auto u64 = [&](size_t at) {
      uint64_t v = 0;
      if (at + 8 <= n) std::memcpy(&v, b + at, 8);
      return v;
    };
    auto cstr = [&](size_t at) {
      return at < n ? std::string(reinterpret_cast<const char*>(b + at),
                                  strnlen(reinterpret_cast<const char*>(b + at), n - at))
                    : std::string();
    };
    int32_t pid = static_cast<int32_t>(u32(0));
    int32_t tid = static_cast<int32_t>(u32(4));
    switch (r.type) {
      case kRecordComm:
        AppendF(&line_, "PERF_RECORD_COMM%s: %s:%d/%d\n", (r.misc & (1 << 13)) ? " exec" : "",
                cstr(8).c_str(), pid, tid);
        break;
      case kRecordFork:
      case kRecordExit:  // pid, ppid, tid, ptid
        AppendF(&line_, "PERF_RECORD_%s(%d:%d):(%d:%d)\n",
                r.type == kRecordFork ? "FORK" : "EXIT", pid, static_cast<int32_t>(u32(8)),
                tid, static_cast<int32_t>(u32(12)));
        break;
      case kRecordMmap:
        AppendF(&line_, "PERF_RECORD_MMAP %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
                pid, tid, u64(8), u64(16), u64(24), (r.misc & (1 << 13)) ? 'r' : 'x',
                cstr(32).c_str());
        break;
      default: {  // MMAP2
        uint32_t prot = u32(56), flags = u32(60);
        char perms[5] = {(prot & 1) ? 'r' : '-', (prot & 2) ? 'w' : '-', (prot & 4) ? 'x' : '-',
                         (flags & 1) ? 's' : 'p', 0};  // PROT_READ/WRITE/EXEC, MAP_SHARED
        if (r.misc & (1 << 14)) {  // PERF_RECORD_MISC_MMAP_BUILD_ID
          static const char kHex[] = "0123456789abcdef";
          std::string hex;
          size_t len = n > 32 ? std::min<size_t>(b[32], 20) : 0;
          for (size_t i = 0; i < len && 36 + i < n; ++i) {
            hex += kHex[b[36 + i] >> 4];
            hex += kHex[b[36 + i] & 15];
          }
          AppendF(&line_, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64
                  " <%s>]: %s %s\n", pid, tid, u64(8), u64(16), u64(24), hex.c_str(), perms,
                  cstr(64).c_str());
        } else {
          AppendF(&line_, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64
                  " %02x:%02x %" PRIu64 " %" PRIu64 "]: %s %s\n", pid, tid, u64(8), u64(16),
                  u64(24), u32(32), u32(36), u64(40), u64(48), perms, cstr(64).c_str());
        }
        break;
      }
    }
    out_.Append(line_);
  }

  uint64_t samples() const { return samples_; }

 private:
  PerfDataReader& reader_;
  Session& session_;
  const ScriptOptions& o_;
  BufferedWriter& out_;
  std::string line_;
  std::vector<ResolvedFrame> frames_;
  std::vector<uint64_t> chain_;
  std::map<const EventAttr*, ScriptFields> fields_;
  uint64_t samples_ = 0;
};

}  // namespace

void ReplayOrdered(PerfDataReader& reader, const std::function<void(const Record&)>& deliver,
                   const std::function<void(const uint8_t*)>& release) {
  // Queued records live in one arena (8-byte aligned words), indexed by small entries that
  // are sorted; no allocation per record.
  struct Entry {
    uint64_t time, seq;
    size_t offset;              // in words, when copied into the arena
    const uint8_t* data;        // or the body itself, when it stays valid (a mapped file)
    uint32_t size;              // body bytes
    uint32_t type;
    uint16_t misc;
  };
  std::vector<uint64_t> arena;
  std::vector<Entry> queue;
  uint64_t seq = 0, round_max = 0, flush_limit = 0;
  auto flush = [&](uint64_t limit, bool all) {
    std::sort(queue.begin(), queue.end(), [](const Entry& a, const Entry& b) {
      return a.time != b.time ? a.time < b.time : a.seq < b.seq;
    });
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
                     BufferedWriter& out) {
  Printer printer(reader, session, o, out);
  ReplayOrdered(reader, [&](const Record& r) {
    if (r.type == kRecordSample) {
      printer.Sample(r);
    } else {
      printer.Other(r);
    }
  });
  return printer.samples();
}

uint64_t RunScript(const std::string& path, const ScriptOptions& o, ByteSink& sink,
                   ScriptReport* report) {
  std::unique_ptr<ByteSource> src = OpenInput(path);
  PerfDataReader reader(*src);
  Symbolizer::Options so;
  so.symfs = o.symfs;
  // Kept, not destroyed, when the process ends after this (base/teardown.h).
  auto symbolizer_owner = std::make_unique<Symbolizer>(so);
  Symbolizer& symbolizer = *symbolizer_owner;
  symbolizer.SetEmbedded(&reader.embedded_symbols());
  symbolizer.SetKernelBuildId(KernelBuildId(reader));
  auto session_owner = std::make_unique<Session>(symbolizer);
  Session& session = *session_owner;
  session.SetUnwindMethod(o.unwind_method);
  session.SetInline(o.inline_frames);
  session.ForgetExited(true);
  bool srcline = false;
  for (const std::string& name : o.fields) srcline |= name == "srcline" || name == "+srcline";
  session.SetSrcline(srcline);
  session.Prefetch(reader);
  BufferedWriter out(sink);
  if (o.header) {
    // The parts of perf script --header that the recording carries.
    std::string h = "# ========\n";
    if (!reader.hostname().empty()) h += "# hostname : " + reader.hostname() + "\n";
    if (!reader.os_release().empty()) h += "# os release : " + reader.os_release() + "\n";
    if (!reader.cmdline().empty()) h += "# cmdline : " + reader.cmdline() + "\n";
    for (const EventAttr& a : reader.attrs()) {
      h += "# event : name = " + a.name + ", type = " + std::to_string(a.type) +
           ", config = " + std::to_string(a.config) + ", sample_type = " +
           std::to_string(a.sample_type) + "\n";
    }
    h += "# ========\n#\n";
    out.Append(h);
  }
  uint64_t n = WriteScript(reader, session, o, out);
  out.Flush();
  sink.Commit();
  if (report) {
    report->truncated = reader.truncated();
    report->truncated_warning = TruncatedWarning(src->name(), reader, n, "printed");
    report->skipped = SkippedRecordsWarning(path, reader);
  }
  session.StopPrefetch();
  KeepUntilExit(std::move(session_owner), std::move(symbolizer_owner));
  return n;
}

}  // namespace pf
