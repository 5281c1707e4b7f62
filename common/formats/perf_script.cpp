// Folding `perf script` text as stackcollapse-perf.pl does (perf_script.h gives the rules). A
// sample is an event line and its stack lines up to an empty line. The Perl script's two regular
// expressions are matched by hand-written scanners with the same leftmost-first results (re2
// takes the rare line that needs backtracking); what they read of a line is handed, as fields,
// to the fold a recording's samples take too (BeginSample: the event filter, the period, the
// root frame; AddFrame: the frame's names from frame_names.h, once per distinct frame, cached by
// the frame's fields; EndSample: the stack into the tree). A whole sample whose frames were seen
// before under the same root frame is recognised by a hash of its stack lines' text without
// their addresses and offsets, on which no name depends (AppendLineKey), and added to its leaf
// directly; the lines are scanned once, their indents and addresses 8 bytes at a time.

#include "formats/perf_script.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "base/checksum.h"
#include "formats/perf_script_caches.h"
#include "formats/perf_script_lines.h"
#include "io/line_reader.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

using script_lines::IsBlankLine;
using script_lines::IsDigit;
using script_lines::IsHex;
using script_lines::IsLowerHex;
using script_lines::IsSpace;
using script_lines::LineMatch;
using script_lines::MatchStackLineFrom;
using script_lines::ParsePeriod;
using script_lines::SingleLineRegex;
using script_lines::SkipSpaces;
using script_lines::TrimLeft;

PerfScriptFolder::PerfScriptFolder(const PerfScriptOptions& options, std::string event_filter)
    : opt_(options), cache_(std::make_unique<Cache>()), samples_cache_(std::make_unique<SampleCache>()) {
  SetFilter(std::move(event_filter));
}

void PerfScriptFolder::SetFilter(std::string filter) {
  event_filter_ = std::move(filter);
  event_filter_key_ = std::string(EventKey(event_filter_));
  filter_keys_.clear();
  mark_off_cpu_ = false;
  if (event_filter_.find(',') == std::string::npos) return;
  size_t start = 0;
  for (;;) {
    size_t comma = event_filter_.find(',', start);
    std::string_view part = std::string_view(event_filter_).substr(start, comma - start);
    if (!part.empty()) filter_keys_.emplace_back(EventKey(part));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  mark_off_cpu_ = filter_keys_.size() > 1 &&
                  std::find(filter_keys_.begin(), filter_keys_.end(), kOffCpuEvent) !=
                      filter_keys_.end();
}

bool PerfScriptFolder::KeepsEvent(std::string_view event) const {
  std::string_view key = EventKey(event);
  if (filter_keys_.empty()) return key == event_filter_key_;
  return std::find(filter_keys_.begin(), filter_keys_.end(), key) != filter_keys_.end();
}

PerfScriptFolder::PerfScriptFolder(const PerfScriptOptions& options, std::string event_filter,
                                   StackList* list)
    : PerfScriptFolder(options, std::move(event_filter)) {
  list_ = list;
}

PerfScriptFolder::~PerfScriptFolder() = default;

Interner& PerfScriptFolder::names() { return list_ ? list_->names() : tree_.names(); }

void PerfScriptFolder::AddToLeaf(NodeId leaf, uint64_t weight) {
  if (list_) {
    list_->AddCount(leaf.value - 1, 0, weight);
  } else {
    tree_.AddSelf(leaf, weight);
  }
}

void PerfScriptFolder::NoteOtherEvent(std::string_view event) {
  ++other_event_samples_;
  for (const std::string& e : other_events_) {
    if (e == event) return;
  }
  if (other_events_.size() < 16) other_events_.emplace_back(event);
}

uint64_t PerfScriptFolder::AddBlock(std::string_view data, uint64_t first_line,
                                    const std::string& file) {
  LineSplitter lines(data);
  uint64_t line_no = first_line - 1;
  std::string_view line;
  EventHead head;
  StackLine sl;
  while (lines.Next(&line)) {
    ++line_no;
    if (!line.empty() && line[0] == '#') continue;  // header and comments
    if (line.size() > BlockReader::kMaxLineBytes) {  // no perf script line is this long
      skipped_.Add(file, line_no);
      continue;
    }
    if (IsBlankLine(line)) {
      EndSample();
      continue;
    }
    if (!IsSpace(line[0])) {
      if (MatchEventHead(line, &head)) {
        OnEvent(line, head);
        if (cpu_missing_) NoteNoCpu(line_no);
        if (in_sample_ && rev_frames_.empty()) FoldStackLines(&lines, &line_no, file);
        continue;
      }
    } else if (!in_sample_ && !after_filtered_) {
      // An indented event line (inferno accepts these; Perl would ignore the sample).
      std::string_view t = TrimLeft(line);
      if (MatchEventHead(t, &head)) {
        OnEvent(t, head);
        if (cpu_missing_) NoteNoCpu(line_no);
        continue;
      }
    }
    if (in_sample_ && TakeSrcline(line)) continue;
    if (MatchStackLine(line, &sl)) {
      if (in_sample_) {
        OnStackLine(line, sl);
      } else if (!after_filtered_) {
        skipped_.Add(file, line_no);  // a frame outside any sample
      }
      continue;
    }
    if (in_sample_ && TakeBareFrame(line)) continue;
    skipped_.Add(file, line_no);
  }
  EndSample();  // the end of a block is the end of the input (Perl would drop the sample)
  return line_no - (first_line - 1);
}

// A fresh sample's stack lines, up to the empty line that ends it (left to the caller). The key
// of a sample is what the fold reads of each line, seeded by its root frame's id (the comm, and
// PID/TID for --pid/--tid; Java's rule follows from it). Without --srcline, a line's part of the
// key is its text without the address and the offset (AppendLineKey), so samples whose stacks
// differ only in addresses and offsets, as most of a capture's do, share one entry; with
// --srcline, where a frame spans lines, it is the lines' text. A sample seen before adds its
// period to the remembered leaf with no per-frame work; a new one is named frame by frame (each
// line's key also keys the frame cache) and its leaf remembered. A sample with a line that is
// not a plain stack line (an event line, a comment, an overlong line, one that needs regex
// backtracking or matches nothing) is left to AddBlock's line-by-line fold, `*lines` untouched.
void PerfScriptFolder::FoldStackLines(LineSplitter* lines, uint64_t* line_no,
                                      const std::string& file) {
  SampleCache& sc = *samples_cache_;
  // The sample's text, when an empty line ends it and it is to be tried (SampleCache::raw).
  const char* text_end = nullptr;
  KeyHash text_key{};
  if (FoldRepeatedText(lines, line_no, &text_end, &text_key)) return;
  sc.key_size = 0;
  sc.frames.clear();
  LineSplitter at = *lines;
  std::string_view line;
  StackLine sl;
  uint64_t n = 0;
  for (LineSplitter next = at; next.Next(&line); at = next, ++n) {
    size_t i = SkipSpaces(line, 0);
    if (i == line.size()) break;  // the empty line that ends the sample
    if (i == 0 || line.size() > BlockReader::kMaxLineBytes) return;
    char* out = sc.KeyRoom(line.size() + 2);
    if (opt_.srcline) {
      std::memcpy(out, line.data(), line.size());
      out[line.size()] = '\n';
      sc.key_size += line.size() + 1;
      continue;
    }
    if (MatchStackLineFrom(line, i, &sl) != LineMatch::kYes) return;
    sc.key_size = AppendLineKey(line, &sl, out) - sc.key.data();
    sc.frames.push_back({sl, sc.key_size});
  }
  const bool keyed = sc.rounds.Try();
  XXH128_hash_t key{};
  bool found = false;
  Table128::Slot* slot = nullptr;
  if (keyed) {
    key = Hash128(sc.key.data(), sc.key_size, SampleSeed());
    slot = sc.table.Find(key, &found);
    sc.rounds.Note(found);
  }
  // (The text's entry is made where the lines read end at its empty line.)
  auto note_text = [&](NodeId leaf) {
    if (text_end == nullptr || at.position() != text_end) return;
    samples_cache_->AddText({text_key.low, text_key.high}, leaf, n);
  };
  if (found) {
    *lines = at;
    *line_no += n;
    TakeCachedLeaf(NodeId(slot->value));
    note_text(NodeId(slot->value));
    return;
  }
  uint64_t skipped_before = skipped_.count;
  if (opt_.srcline) {
    for (uint64_t i = 0; i < n && lines->Next(&line); ++i) {
      ++*line_no;
      if (TakeSrcline(line)) {
      } else if (MatchStackLine(line, &sl)) {
        OnStackLine(line, sl);
      } else if (!TakeBareFrame(line)) {
        skipped_.Add(file, *line_no);
      }
    }
  } else {
    const uint64_t seed = java_ ? kLineKeySeed + 1 : kLineKeySeed;
    // Every frame's hash first, its slot asked for: the lookups' waits on memory overlap.
    size_t begin = 0;
    for (SampleCache::Frame& f : sc.frames) {
      f.hash = HashKey(std::string_view(sc.key.data() + begin, f.key_end - begin), seed);
      begin = f.key_end;
      PrefetchFrame(f.hash);
    }
    for (const SampleCache::Frame& f : sc.frames) {
      if (skip_remaining_) break;
      Push(Transform(f.hash, [&f] {
        return ScriptFrame{f.line.pc, f.line.func, f.line.dso, {}};
      }));
    }
    *lines = at;
    *line_no += n;
  }
  NodeId leaf = EndSample();
  if (skipped_.count != skipped_before) return;  // its warnings are given each time
  if (samples_cache_->table.used >= SampleCache::kMaxEntries) {
    samples_cache_ = std::make_unique<SampleCache>();  // bound memory: start over
  }
  if (keyed) {
    slot = samples_cache_->table.Find(key, &found);
    if (!found) samples_cache_->table.Insert(slot, key, leaf.value);
  }
  note_text(leaf);
}

bool PerfScriptFolder::FoldRepeatedText(LineSplitter* lines, uint64_t* line_no,
                                        const char** text_end, KeyHash* text_key) {
  SampleCache& sc = *samples_cache_;
  if (!sc.raw_rounds.Try()) return false;
  const char* text = lines->position();
  if (text < lines->end() && *text != '\n') {
    *text_end = LineSplitter::FindEmptyLine(text, lines->end(), SampleCache::kMaxText);
  }
  const SampleCache::RawLeaf* seen = nullptr;
  if (*text_end) {
    const XXH128_hash_t h = Hash128(text, static_cast<size_t>(*text_end - text), SampleSeed());
    *text_key = {h.low64, h.high64};
    seen = sc.FindText(h);
  }
  sc.raw_rounds.Note(seen != nullptr);
  if (!seen) return false;
  lines->SkipTo(*text_end);
  *line_no += seen->lines;
  TakeCachedLeaf(NodeId(seen->leaf));
  ++cached_texts_;
  return true;
}

void PerfScriptFolder::TakeCachedLeaf(NodeId leaf) {
  if (leaf != kNoLeaf) {
    AddToLeaf(leaf, period_);
    ++samples_;
  }
  ++cached_samples_;
  last_leaf_ = leaf;
  in_sample_ = false;
  period_ = 1;
}

// A stack line's key: its text from the name on, without the name's offset ("NAME (DSO)" and
// whatever follows the ')'), after the address when the address names the frame (--addrs, an
// unknown function) and a space, then a newline. It gives back the fields the names depend on
// (the address, the name without its offset, the dso: MatchStackLine finds the same last " ("
// and last ')' in it), so equal keys name alike; `sl->func` loses its offset. Writes at most
// line.size() + 2 bytes at `out`; returns their end.
char* PerfScriptFolder::AppendLineKey(std::string_view line, StackLine* sl, char* out) const {
  sl->func = StripOffset(sl->func);
  if (opt_.include_addrs && sl->func.find("[unknown]") != std::string_view::npos) {
    std::memcpy(out, sl->pc.data(), sl->pc.size());
    out += sl->pc.size();
  }
  *out++ = ' ';
  std::memcpy(out, sl->func.data(), sl->func.size());
  out += sl->func.size();
  const char* dso_at = sl->dso.data() - 2;  // the " (" before the dso
  size_t tail = line.data() + line.size() - dso_at;
  std::memcpy(out, dso_at, tail);
  out += tail;
  *out++ = '\n';
  return out;
}

NodeId PerfScriptFolder::FoldSample(std::string_view text, const std::string& file) {
  last_leaf_ = kNoLeaf;
  AddBlock(text, 1, file);
  return last_leaf_;
}

WeightUnit PerfScriptFolder::Unit() const {
  if (samples_ == 0) return WeightUnit::kUnspecified;
  if (opt_.weight_samples || with_period_ == 0) return WeightUnit::kSamples;
  if (without_period_ > 0) return WeightUnit::kUnspecified;
  // Periods in nanoseconds: the clocks' and the waits' (perf's and pf-record's --off-cpu).
  auto in_ns = [](std::string_view key) {
    return key == "cpu-clock" || key == "task-clock" || key == kOffCpuEvent;
  };
  if (filter_keys_.empty()) {
    return in_ns(event_filter_key_) ? WeightUnit::kNanoseconds : WeightUnit::kEvents;
  }
  size_t ns = static_cast<size_t>(std::count_if(filter_keys_.begin(), filter_keys_.end(), in_ns));
  if (ns == filter_keys_.size()) return WeightUnit::kNanoseconds;
  return ns == 0 ? WeightUnit::kEvents : WeightUnit::kUnspecified;
}

void PerfScriptFolder::OnEvent(std::string_view line, const EventHead& head) {
  SampleHead h{head.comm, head.pid, head.tid, {}, {}, false, {}};
  std::string_view single_stack;
  const size_t rest_at = head.tid.empty() ? head.pid.data() + head.pid.size() - line.data()
                                          : head.tid.data() + head.tid.size() - line.data();
  if (opt_.include_cpu) h.cpu = FindCpu(line, rest_at);
  if (!MatchEventTail(line, &h.period, &h.event)) {
    // Perl finds no period or event here; a one-frame stack may follow the event.
    std::string_view rest = line.substr(rest_at);
    re2::StringPiece p, ev, st;
    StackLine sl;
    if (re2::RE2::FullMatch(re2::StringPiece(rest.data(), rest.size()), SingleLineRegex(), &p,
                            &ev, &st) &&
        MatchStackLine(std::string_view(st.data(), st.size()), &sl) &&
        std::all_of(sl.pc.begin(), sl.pc.end(), IsHex)) {
      h.event = std::string_view(ev.data(), ev.size());
      h.period = p.data() ? std::string_view(p.data(), p.size()) : std::string_view();
      h.one_line = true;
      single_stack = std::string_view(st.data(), st.size());
    }
  }
  if (!BeginSample(h)) return;
  if (!single_stack.empty()) {
    StackLine sl;
    MatchStackLine(single_stack, &sl);
    OnStack(sl);
    EndSample();
  }
}

bool PerfScriptFolder::BeginSample(const SampleHead& h) {
  last_leaf_ = kNoLeaf;
  if (!h.event.empty()) {
    if (event_filter_.empty() && !h.one_line) {
      SetFilter(std::string(h.event));
    } else if (!event_filter_.empty() && h.event != event_filter_ && !KeepsEvent(h.event)) {
      NoteOtherEvent(h.event);
      after_filtered_ = true;
      return false;
    }
  }

  if (opt_.include_cpu && !SetCpuRoot(h.cpu)) {
    cpu_missing_ = true;  // (AddBlock notes the line; the sample's frames are let go)
    after_filtered_ = true;
    return false;
  }
  off_cpu_sample_ = mark_off_cpu_ && EventKey(h.event) == kOffCpuEvent;
  // Perl: $period = 1 unless $period ("" and "0" are false).
  bool has_period = !h.period.empty() && h.period != "0";
  period_ = has_period ? ParsePeriod(h.period) : 1;
  ++(has_period ? with_period_ : without_period_);
  if (opt_.weight_samples) period_ = 1;

  // Perl: a missing (or "0") second number makes the first one the TID, the PID unknown.
  std::string_view pid = h.pid, tid = h.tid;
  if (tid.empty() || tid == "0") {
    tid = pid;
    pid = "?";
  }
  // The root frame's text before its characters are replaced: the comm, as it is unless
  // --pid or --tid add to it.
  std::string_view raw = h.comm;
  if (opt_.include_tid || opt_.include_pid) {
    scratch_.assign(h.comm);
    scratch_ += '-';
    scratch_ += pid;
    if (opt_.include_tid) {
      scratch_ += '/';
      scratch_ += tid;
    }
    raw = scratch_;
  }
  // The roots of the last few threads sampled (a capture interleaves the CPUs' samples), keyed
  // by that text; the last one found is asked first.
  RecentRoot* hit = &recent_roots_[last_root_];
  if (!(hit->named && hit->raw == raw)) {
    hit = nullptr;
    for (RecentRoot& r : recent_roots_) {
      if (r.named && r.raw == raw) {
        hit = &r;
        break;
      }
    }
  }
  if (!hit) {
    last_root_ = next_root_++ % recent_roots_.size();
    hit = &recent_roots_[last_root_];
    hit->named = true;
    hit->raw.assign(raw);
    // Spaces become underscores (Perl); a ';' becomes ':' as in every other name, or it would
    // split the first frame in two (the Perl script and inferno leave it: `map;churn`).
    std::string name(raw);
    for (char& c : name) {
      if (c == ' ') c = '_';
      if (c == ';') c = ':';
    }
    hit->java = name.compare(0, 4, "java") == 0;
    hit->id = names().Intern(name);
  } else {
    last_root_ = static_cast<size_t>(hit - recent_roots_.data());
  }
  java_ = hit->java;
  pname_ = hit->id;
  in_sample_ = true;
  return true;
}

// The CPU of an event line, "[003]" without its brackets: where perf prints it, after the
// ids; else the first such word (the Perl pattern may have read "comm -1 [001] 5.2:" as a comm
// and 5 as the PID). Empty when there is none.
std::string_view PerfScriptFolder::FindCpu(std::string_view line, size_t ids_end) {
  auto cpu_at = [&](size_t b) -> std::string_view {
    size_t e = b + 1;
    while (e < line.size() && IsDigit(line[e])) ++e;
    if (b < line.size() && line[b] == '[' && e > b + 1 && e < line.size() && line[e] == ']' &&
        (e + 1 == line.size() || IsSpace(line[e + 1]))) {
      return line.substr(b + 1, e - b - 1);
    }
    return {};
  };
  if (std::string_view cpu = cpu_at(SkipSpaces(line, ids_end)); !cpu.empty()) return cpu;
  for (size_t b = 1; b < line.size(); ++b) {
    if (!IsSpace(line[b - 1]) || line[b] != '[') continue;
    if (std::string_view cpu = cpu_at(b); !cpu.empty()) return cpu;
  }
  return {};
}

bool PerfScriptFolder::SetCpuRoot(std::string_view cpu) {
  if (cpu.empty() || cpu.size() > 6) return false;
  size_t n = 0;
  for (char c : cpu) {
    if (!IsDigit(c)) return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n >= cpu_roots_.size()) cpu_roots_.resize(n + 1, StrId::Invalid());
  if (!cpu_roots_[n].valid()) {
    std::string name = "[cpu ";
    name += cpu;
    name += ']';
    cpu_roots_[n] = names().Intern(name);
  }
  cpu_root_ = cpu_roots_[n];
  return true;
}

bool PerfScriptFolder::BeginSampleLine(std::string_view line) {
  EventHead head;
  last_leaf_ = kNoLeaf;
  if (!line.empty() && line[0] == '#') return false;  // a comment, as AddBlock reads it
  if (line.size() > BlockReader::kMaxLineBytes || IsBlankLine(line)) return false;
  if (!IsSpace(line[0])) {
    if (!MatchEventHead(line, &head)) return false;
    OnEvent(line, head);
  } else {
    std::string_view t = TrimLeft(line);
    if (!MatchEventHead(t, &head)) return false;
    OnEvent(t, head);
  }
  return in_sample_;
}

void PerfScriptFolder::OnStackLine(std::string_view line, const StackLine& sl) {
  if (!opt_.srcline) {
    OnStack(sl);
    return;
  }
  pending_.assign(line);
}

// --srcline: perf script -F +srcline prints each frame's source line on the line after it
// ("  file.c:12"); the Perl script takes that next line as the source line. But perf prints
// none after a frame it cannot place at all (an unnamed frame where addr2line finds no
// function): a line that is itself a frame ("ADDR NAME (DSO)", or an inlined frame's
// "ADDR NAME", ADDR in hex) is taken as the next frame, where the Perl script would swallow
// it. (A source line's first word is never all hex digits: "file.c:12", "??:0", "dso[ad]".)
bool PerfScriptFolder::TakeSrcline(std::string_view line) {
  if (!opt_.srcline || pending_.empty()) return false;
  std::string_view t = TrimLeft(line);
  size_t n = 0;
  while (n < t.size() && IsLowerHex(t[n])) ++n;
  if (n > 0 && n + 1 < t.size() && t[n] == ' ' && t.size() < line.size() && !pending_bare_) {
    FlushPending({});
    return false;
  }
  FlushPending(line);
  return true;
}

// perf prints an inlined frame with -F +srcline as "ADDR NAME+OFF", then
// "  file.c:12 (inlined)": a frame line without its dso, which waits for its source line.
bool PerfScriptFolder::TakeBareFrame(std::string_view line) {
  if (!opt_.srcline) return false;
  std::string_view t = TrimLeft(line);
  size_t n = 0;
  while (n < t.size() && IsLowerHex(t[n])) ++n;
  if (n == 0 || n == t.size() || t[n] != ' ' || t.size() == line.size()) return false;
  pending_.assign(line);
  pending_bare_ = true;
  return true;
}

// Folds the waiting frame line with its source line, as the Perl script appends it
// (":file:line", without [...] parts).
void PerfScriptFolder::FlushPending(std::string_view srcline) {
  if (pending_.empty()) return;
  constexpr std::string_view kInlined = " (inlined)";
  bool inlined = srcline.size() >= kInlined.size() &&
                 srcline.substr(srcline.size() - kInlined.size()) == kInlined;
  if (inlined) srcline.remove_suffix(kInlined.size());
  if (pending_bare_) pending_ += inlined ? kInlined : std::string_view(" ()");
  StackLine sl;
  if (MatchStackLine(pending_, &sl)) {
    OnStack(sl, srcline);
  }
  pending_.clear();
  pending_bare_ = false;
}

void PerfScriptFolder::OnStack(const StackLine& sl, std::string_view srcline) {
  AddFrame(ScriptFrame{sl.pc, StripOffset(sl.func), sl.dso, srcline});
}

void PerfScriptFolder::AppendFrameKey(std::string_view name, std::string_view dso,
                                      std::string_view srcline, std::string_view pc,
                                      std::string* key) const {
  if (!opt_.srcline) srcline = {};
  // The address names only an unknown function ("[dso <addr>]", NameFrame): a named frame's
  // key leaves it out, so its samples at other addresses are found again.
  if (!opt_.include_addrs || name.find("[unknown]") == std::string_view::npos) pc = {};
  size_t at = key->size();
  key->resize(at + 4 * sizeof(uint32_t) + name.size() + dso.size() + srcline.size() + pc.size());
  char* out = key->data() + at;
  auto put = [&out](std::string_view part) {
    uint32_t n = static_cast<uint32_t>(part.size());
    std::memcpy(out, &n, sizeof n);
    if (n) std::memcpy(out + sizeof n, part.data(), n);  // (an empty view's data may be null)
    out += sizeof n + n;
  };
  put(name);
  put(dso);
  put(srcline);
  put(pc);
}

void PerfScriptFolder::AddFrame(const ScriptFrame& f) {
  if (skip_remaining_) return;
  std::string& key = cache_->key;
  key.clear();
  AppendFrameKey(f.name, f.dso, f.srcline, f.pc, &key);
  Push(Transform(HashKey(key, java_ ? 3 : 2), [&f] { return f; }));
}

void PerfScriptFolder::Push(const Cached& c) {
  if (c.one_name) {
    rev_frames_.push_back(c.one);
    return;
  }
  for (uint32_t i = c.count; i-- > 0;) rev_frames_.push_back(cache_->frames[c.first + i]);
  if (c.skip_after) skip_remaining_ = true;
}

PerfScriptFolder::KeyHash PerfScriptFolder::HashKey(std::string_view key, uint64_t seed) {
  XXH128_hash_t h = Hash128(key.data(), key.size(), seed);
  return {h.low64, h.high64};
}

void PerfScriptFolder::PrefetchFrame(KeyHash hash) const { cache_->lines.Prefetch(hash.low); }

template <typename MakeFrame>
PerfScriptFolder::Cached PerfScriptFolder::Transform(KeyHash key_hash, MakeFrame make_frame) {
  const XXH128_hash_t hash{key_hash.low, key_hash.high};
  bool found;
  Table128::Slot* slot = cache_->lines.Find(hash, &found);
  if (found) {
    if (slot->value & Cache::kOneName) {
      Cached c;
      c.count = 1;
      c.one = StrId{slot->value & ~Cache::kOneName};
      c.one_name = true;
      return c;
    }
    return cache_->entries[slot->value];
  }
  if (cache_->lines.used >= Cache::kMaxEntries) {  // bound memory on endless distinct lines
    cache_ = std::make_unique<Cache>();
    slot = cache_->lines.Find(hash, &found);
  }
  Cache& cache = *cache_;
  Cached entry;
  entry.first = static_cast<uint32_t>(cache.frames.size());
  const ScriptFrame f = make_frame();
  NameFrame(f, opt_, java_, &cache.names);
  entry.skip_after = cache.names.skip_after;
  for (size_t i = 0; i < cache.names.count; ++i) {
    const std::string& func = cache.names.names[i];
    StrId id = names().Intern(func);
    if (opt_.note_modules && !f.dso.empty() && !func.empty() &&
        (func[0] != '[' || opt_.include_addrs)) {
      if (f.dso != cache.module_dso || !cache.module_named) {  // frames come in runs of a dso
        cache.module_dso.assign(f.dso);
        cache.module = tree_.names().Intern(DsoFile(f.dso));
        cache.module_named = true;
      }
      const StrId module = cache.module;
      tree_.NoteModule(id, module);
      if (f.entry != ScriptFrame::kNoEntry) tree_.NoteAddress(id, f.entry);
      if (!f.build_id.empty()) tree_.NoteBuildId(module, tree_.names().Intern(f.build_id));
    }
    cache.frames.push_back(id);
  }
  entry.count = static_cast<uint32_t>(cache.frames.size() - entry.first);
  if (entry.count == 1 && !entry.skip_after && cache.frames.back().value < Cache::kOneName) {
    entry.one = cache.frames.back();
    entry.one_name = true;
    cache.frames.pop_back();
    cache.lines.Insert(slot, hash, entry.one.value | Cache::kOneName);
  } else {
    cache.lines.Insert(slot, hash, static_cast<uint32_t>(cache.entries.size()));
    cache.entries.push_back(entry);
  }
  return entry;
}

NodeId PerfScriptFolder::EndSample() {
  FlushPending({});
  after_filtered_ = false;
  if (!in_sample_) return kNoLeaf;
  path_.clear();
  if (opt_.include_cpu) path_.push_back(cpu_root_);
  if (!skip_remaining_) path_.push_back(pname_);
  for (size_t i = rev_frames_.size(); i-- > 0;) path_.push_back(rev_frames_[i]);
  NodeId leaf = kNoLeaf;
  if (off_cpu_sample_ && !path_.empty()) {
    if (!off_cpu_frame_named_) off_cpu_frame_ = names().Intern(kOffCpuFrame);
    off_cpu_frame_named_ = true;
    path_.push_back(off_cpu_frame_);
  }
  off_cpu_sample_ = false;
  if (!path_.empty()) {
    if (list_) {
      leaf = NodeId(list_->AddFrames(path_) + 1);
      AddToLeaf(leaf, period_);
    } else {
      leaf = tree_.AddStack(path_, period_);
    }
    ++samples_;
  }
  last_leaf_ = leaf;
  in_sample_ = false;
  skip_remaining_ = false;
  rev_frames_.clear();
  period_ = 1;
  return leaf;
}

}  // namespace pf
