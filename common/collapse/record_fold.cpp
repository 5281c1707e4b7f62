// The fold of a recording's samples.
//
// pf-collapse on a recording must give what `pf-script REC | pf-collapse` gives, byte for
// byte: stackcollapse-perf.pl's reading of perf script's text decides how a sample folds (its
// event-line pattern, which can take the time into the comm; the frame names it cleans; the
// samples of other events it skips). Those rules are written once, in the text folder
// (PerfScriptFolder) and frame_names.h, as functions over a sample's fields: the text reader
// parses the fields from the lines, and this fold gives them from the sample and its named
// frames (Session::Frames), with no text. Each key's first sample is folded so, and every
// later sample of its kind folds as it did: its weight is added to the same leaf of the tree.
// Most samples of a recording repeat an earlier one, and then cost a hash and a table lookup.
//
// A sample's kind is keyed twice. First by its addresses (SampleKeys: event, thread, comm,
// maps generation and call chain), which needs no naming. A new chain of addresses is then
// named and keyed by what the fold reads of the names (NamedKey): the samples of a loop differ
// in their leaf's address alone and fold alike.
//
// Where the fields are what the Perl script reads from the text (HeadIsPlain, FramesArePlain:
// nearly always), they are folded as they are. Where perf script's text is ambiguous, the
// reading depends on the text itself, and that text is folded instead:
//   - an event line whose comm is one letter or holds whitespace, or which has no time or an
//     event name with whitespace: the Perl pattern may take the ids, the time or the period
//     into the comm. Only the event line is printed and read (BeginSampleLine); where the
//     pattern reaches into the time or the period (a one-letter comm before a five-digit
//     thread id: `w 19375  8425.338890:    1001001` gives the comm `w 19375  8425.338890:`),
//     the fold depends on each sample's own line, and such a key's samples are folded one by
//     one;
//   - a sample type without a call chain (the frame is on the event line, read by another
//     pattern), and frames whose lines read otherwise than their fields: an empty name or one
//     that starts with whitespace, a line break in a name, a dso holding " (", and with
//     --srcline source lines that look like frames: the whole sample is printed and read.

#include "collapse/record_fold.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

#include "collapse/test_seams.h"
#include "pfstream/sample_layout.h"


namespace pf {

namespace {
constexpr uint32_t kTypeTracepoint = 2;         // PERF_TYPE_TRACEPOINT
}  // namespace

SampleKeys::SampleKeys(bool by_cpu) : by_cpu_(by_cpu) {
  if (size_t forced = test_seams::sample_key_keys.load()) max_keys_ = forced;
}

RecordFold::RecordFold(const PerfScriptOptions& options, const std::string& event_filter,
                       std::string source_name)
    : opt_(options), folder_(options, event_filter), source_name_(std::move(source_name)) {
  fields_.srcline = opt_.srcline;  // perf script's default output (-F +srcline for --srcline)
  // --pid/--tid name the process, which perf script prints only with -F +pid: the
  // recording holds it, so the text folded is that of `perf script -F +pid`.
  fields_.pid = opt_.include_pid || opt_.include_tid;
}

void RecordFold::Fold(Session& session, Sample s, std::span<const uint64_t> chain, KeyFold& key,
                      bool fresh) {
  uint64_t weight = opt_.weight_samples || s.period == 0 ? 1 : s.period;
  // The unit is the first folded sample's (one of the event kept, as the text's fold has it),
  // none when the lines of some samples show a period and others' do not (tracepoints').
  auto counted = [&] {
    ++samples_;
    (Traced(s) ? saw_traced_ : saw_period_) = true;
    if (saw_traced_ && saw_period_ && !opt_.weight_samples) {
      folder_.tree().set_unit(WeightUnit::kUnspecified);
      unit_mixed_ = true;
    } else if (!unit_mixed_ && folder_.tree().unit() == WeightUnit::kUnspecified) {
      folder_.tree().set_unit(UnitOf(s));
    }
  };
  // A sample folded as an earlier one was: its weight on the same leaf.
  auto fold_as = [&](NodeId leaf, bool filtered) {
    if (leaf != PerfScriptFolder::kNoLeaf) {
      folder_.tree().AddSelf(leaf, weight);
      if (opt_.keep_times) timed_.push_back(Timed(s, leaf, weight));
      counted();
    } else if (filtered) {
      ++filtered_hits_;
    }
  };
  if (!fresh && key.reuse) {
    fold_as(key.leaf, key.filtered);
    return;
  }
  std::string_view comm = session.Comm(s.pid, s.tid);
  if (s.attr->has_period()) s.period = weight;  // the period read is the weight
  session.FrameIds(s, chain, &frame_ids_);
  fields_.period = s.attr->has_period();  // (NamedKey and FoldNamed read them)
  fields_.cpu = opt_.include_cpu || (s.attr->sample_type & sample_layout::kCpu);  // as perf prints
  fields_.time = s.attr->sample_type & sample_layout::kTime;
  // A tracepoint's line, as perf script prints it: its fields after the event, no period,
  // no frame without a call chain. How the Perl pattern reads that line depends on the
  // fields' text, so each such sample is printed and read (FoldText), none reused.
  fields_.trace = false;
  fields_.ip = fields_.sym = fields_.symoff = fields_.dso = true;
  if (Traced(s)) SetTracepointFields(&fields_, *s.attr, pipe_);
  // A new chain of addresses often folds as an earlier one did: the fold reads names, not
  // addresses or offsets (a loop's samples differ in their leaf's address alone). So the
  // frames are keyed again by what the fold reads of them. (A key whose samples fold one by
  // one has no such twin: the named key holds all its fold depends on but the time.)
  XXH128_hash_t named_key{};
  if (fresh) {
    named_key = NamedKey(session, s, comm);
    if (const Named* n = named_.Find(named_key)) {
      key = KeyFold{n->leaf, n->filtered, true};
      fold_as(n->leaf, n->filtered);
      return;
    }
  }
  frames_.clear();
  for (FrameId id : frame_ids_) frames_.push_back(session.Frame(id));
  uint64_t filtered_before = folder_.other_event_samples();
  bool reuse = false;
  NodeId leaf = FoldNamed(session, s, comm, &reuse);
  ++named_folds_;
  if (fresh) {
    key = KeyFold{leaf, folder_.other_event_samples() != filtered_before, reuse};
    bool inserted;
    if (reuse) named_.TryEmplace(named_key, Named{key.leaf, key.filtered}, &inserted);
  }
  if (leaf != PerfScriptFolder::kNoLeaf) {
    // (A tracepoint's text shows no period: it weighs 1, as its line is read.)
    if (opt_.keep_times) timed_.push_back(Timed(s, leaf, Traced(s) ? 1 : weight));
    counted();
  }
}

NodeId RecordFold::FoldNamed(Session& session, const Sample& s, std::string_view comm,
                             bool* reuse) {
  if (!(s.attr->sample_type & sample_layout::kCallchain) || !FramesArePlain() || fields_.trace) {
    return FoldText(session, s, reuse);
  }
  // The event line's fields: comm, ids, period and event (AppendSampleHead prints them).
  if (HeadIsPlain(s, comm)) {
    char pid[16], tid[16], period[24], cpu[16];
    auto digits = [](char* buf, size_t n, uint64_t v) {
      return std::string_view(buf, std::to_chars(buf, buf + n, v).ptr - buf);
    };
    PerfScriptFolder::SampleHead head;
    head.comm = comm;
    if (fields_.pid) {
      head.pid = digits(pid, sizeof pid, s.pid);
      head.tid = digits(tid, sizeof tid, s.tid);
    } else {
      head.pid = digits(pid, sizeof pid, s.tid);
    }
    if (fields_.period) head.period = digits(period, sizeof period, s.period);
    head.event = s.attr->name;
    if (fields_.cpu) {  // as perf prints it, "%03u"
      head.cpu = std::string_view(cpu, static_cast<size_t>(std::snprintf(cpu, sizeof cpu,
                                                                         "%03u", s.cpu)));
    }
    folder_.BeginSample(head);
    *reuse = true;
  } else {
    text_.clear();
    AppendSampleHead(session, s, fields_, &text_);
    folder_.BeginSampleLine(text_);
    *reuse = HeadEndsInIds(session, s, text_);
  }
  if (folder_.in_sample()) {
    char pc[24];
    for (const ResolvedFrame& f : frames_) {
      ScriptFrame frame;
      frame.pc = std::string_view(pc, std::to_chars(pc, pc + sizeof pc, f.addr, 16).ptr - pc);
      frame.name = f.has_sym ? f.sym : StripOffset(f.sym);  // perf prints sym+0xOFF
      frame.dso = f.inlined ? std::string_view("inlined") : f.dso;
      if (fields_.srcline) frame.srcline = f.srcline;
      if (opt_.note_modules && f.has_sym && !f.inlined && f.symoff <= f.addr) {
        frame.entry = f.addr - f.symoff;  // for pprof's locations
        frame.build_id = f.build_id;
      }
      folder_.AddFrame(frame);
    }
  }
  folder_.EndSample();
  return folder_.last_leaf();
}

// The whole sample as perf script prints it, read as text.
NodeId RecordFold::FoldText(Session& session, const Sample& s, bool* reuse) {
  text_.clear();
  AppendResolvedSample(session, s, fields_, frames_, &text_);
  NodeId leaf = folder_.FoldSample(text_, source_name_);
  *reuse = !fields_.trace &&
           HeadEndsInIds(session, s, std::string_view(text_).substr(0, text_.find('\n')));
  return leaf;
}

// Whether the Perl pattern reads the event line AppendSampleHead prints for `s` as its fields:
// a comm of two characters or more without whitespace (the lazy comm then ends at the first
// space, before the ids), a time (the event-tail pattern's colon before the period) and an
// event name without whitespace. (Perl's \s: AddBlock's lines are split at '\n', end before a
// '\r'; a '#' starts a comment.)
bool RecordFold::HeadIsPlain(const Sample& s, std::string_view comm) {
  auto has_space = [](std::string_view v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return perl::IsSpace(c); });
  };
  if (!fields_.time || comm.size() < 2 || comm[0] == '#' || has_space(comm)) return false;
  // perf prints an id the kernel gave as -1 signed, which the Perl pattern's \d+ does not read.
  if (static_cast<int32_t>(s.pid) < 0 || static_cast<int32_t>(s.tid) < 0) return false;
  // (The event's name, read once for the last event seen plain: most recordings have one.)
  if (s.attr == plain_event_) return true;
  const std::string& event = s.attr->name;
  if (event.empty() || event.size() >= 4096 || has_space(event)) return false;
  plain_event_ = s.attr;
  return true;
}

// Whether each of frames_'s lines reads as its fields. Each frame is asked once (by its
// FrameId; the transient ids of unmapped addresses each time): a system-wide capture names
// its frames again in thousands of samples.
bool RecordFold::FramesArePlain() {
  enum : uint8_t { kUnknown, kPlain, kNotPlain };
  for (size_t i = 0; i < frames_.size(); ++i) {
    const FrameId id = frame_ids_[i];
    if (Session::TransientFrame(id)) {
      if (!FrameIsPlain(frames_[i])) return false;
      continue;
    }
    if (id.value >= plain_frames_.size()) plain_frames_.resize(id.value + 1, kUnknown);
    uint8_t& plain = plain_frames_[id.value];
    if (plain == kUnknown) plain = FrameIsPlain(frames_[i]) ? kPlain : kNotPlain;
    if (plain == kNotPlain) return false;
  }
  return true;
}

// Whether the lines of frame `f` read as its fields (MatchStackLine's pattern; with
// --srcline, the lookahead that pairs a frame with its source line: PerfScriptFolder's
// TakeSrcline and TakeBareFrame).
bool RecordFold::FrameIsPlain(const ResolvedFrame& f) const {
  // (A loop: find_first_of calls memchr on its set for each character.)
  auto has_break = [](std::string_view v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return c == '\n' || c == '\r'; });
  };
  constexpr std::string_view kInlined = " (inlined)";
  if (f.sym.empty() || perl::IsSpace(f.sym[0]) || has_break(f.sym)) return false;
  if (f.sym.size() + f.dso.size() + f.srcline.size() > (1 << 20)) return false;
  if (!f.inlined && (has_break(f.dso) || f.dso.find(" (") != std::string_view::npos)) {
    return false;
  }
  if (!fields_.srcline || f.srcline.empty()) return true;
  std::string_view src = f.srcline;
  if (has_break(src) || src.ends_with(kInlined)) return false;
  size_t b = 0;
  while (b < src.size() && perl::IsSpace(src[b])) ++b;
  if (b == src.size()) return false;  // a blank line ends the sample
  size_t n = b;
  while (n < src.size() && perl::IsLowerHex(src[n])) ++n;
  if (n > b && n + 1 < src.size() && src[n] == ' ') return false;  // reads as a frame
  // An inlined frame's line is then bare, "ADDR NAME+OFF": it must not read as a stack line,
  // with a " (" before a ')' (the space after ADDR counts).
  if (size_t r = f.sym.rfind(')'); f.inlined && r != std::string_view::npos &&
                                   (f.sym[0] == '(' || f.sym.substr(0, r).find(" (") !=
                                                           std::string_view::npos)) {
    return false;
  }
  return true;
}

// Whether the event line's comm and ids, as the Perl pattern takes them, end within the comm
// and ids AppendSampleHead prints: then they are the same for every sample of the key.
bool RecordFold::HeadEndsInIds(Session& session, const Sample& s, std::string_view line) {
  EventHead head;
  if (!MatchEventHead(line, &head)) return false;
  ScriptFields ids = fields_;
  ids.cpu = ids.time = ids.period = ids.event = false;
  ids_text_.clear();
  AppendSampleHead(session, s, ids, &ids_text_);
  size_t match_end = head.tid.data() + head.tid.size() - line.data();
  return match_end < ids_text_.size() && line.starts_with(ids_text_);
}

bool RecordFold::Traced(const Sample& s) {
  return s.attr->type == kTypeTracepoint && s.attr->trace;
}

WeightUnit RecordFold::UnitOf(const Sample& s) const {
  constexpr uint32_t kTypeSoftware = 1;              // PERF_TYPE_SOFTWARE
  constexpr uint64_t kCpuClock = 0, kTaskClock = 1;  // PERF_COUNT_SW_CPU_CLOCK, _TASK_CLOCK
  if (opt_.weight_samples || s.period == 0) return WeightUnit::kSamples;
  if (Traced(s)) return WeightUnit::kSamples;  // a tracepoint's line shows no period
  if (s.attr->type == kTypeSoftware &&
      (s.attr->config == kCpuClock || s.attr->config == kTaskClock)) {
    return WeightUnit::kNanoseconds;
  }
  // perf record --off-cpu's event and pf-record's: each sample is a wait, its period the
  // nanoseconds it lasted.
  if (s.attr->name == kOffCpuEvent) return WeightUnit::kNanoseconds;
  return WeightUnit::kEvents;
}

// What the fold reads of a sample's frames: names, dsos, marks and source lines (their
// NameIds); the addresses only for --addrs ("[dso <addr>]"). The ip is printed only on the
// event line of a sample type without a call chain (AppendResolvedSample): a DWARF sample,
// whose recorded chain is empty (the kernel's part), names its leaf in a frame line, and the
// samples of a loop share a key whatever their leaf's address. (A NameId holds the frame's
// source line whenever the Session gives one; the key is then finer than the fold needs
// without --srcline, never coarser.)
XXH128_hash_t RecordFold::NamedKey(const Session& session, const Sample& s,
                                   std::string_view comm) {
  bytes_.clear();
  auto add = [&](const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); };
  const bool ip_printed = !(s.attr->sample_type & sample_layout::kCallchain);
  // The ids are read only for --pid and --tid, and where the Perl pattern may take them
  // into the comm: the samples of all threads of one comm fold alike otherwise.
  const bool ids_read = fields_.pid || ip_printed || !HeadIsPlain(s, comm);
  uint64_t head[7] = {reinterpret_cast<uintptr_t>(s.attr), ids_read ? s.pid : ~uint64_t{0},
                      ids_read ? s.tid : 0, static_cast<uint64_t>(s.misc & 7),
                      ip_printed ? s.ip : 0, comm.size(),
                      opt_.include_cpu || ids_read ? s.cpu : 0};
  add(head, sizeof head);
  add(comm.data(), comm.size());
  for (FrameId id : frame_ids_) {
    uint32_t name = session.NameIdOf(id).value;
    add(&name, sizeof name);
    if (opt_.include_addrs) add(&session.Frame(id).addr, sizeof(uint64_t));
  }
  return Hash128(bytes_.data(), bytes_.size());
}

}  // namespace pf
