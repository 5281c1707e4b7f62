// The fold of a recording's samples.
//
// pf-collapse on a recording must give what `pf-script REC | pf-collapse` gives, byte for
// byte: stackcollapse-perf.pl's reading of perf script's text decides how a sample folds (its
// event-line pattern, which can take the time into the comm; the frame names it cleans; the
// samples of other events it skips). So the first sample of each kind is turned into that
// text and folded by the text folder (PerfScriptFolder), and every later sample of its kind
// folds as it did: its weight is added to the same leaf of the tree. Most samples of a
// recording repeat an earlier one, and then cost a hash and a table lookup instead of naming
// their frames and printing and parsing a text.
//
// A sample's kind is keyed twice. First by its addresses (SampleKeys: event, thread, comm,
// maps generation and call chain), which needs no naming. A new chain of addresses is then
// named (Session::Frames) and keyed by what the text fold reads of the names (NamedKey): the
// samples of a loop differ in their leaf's address alone and fold alike. Where the event-line
// pattern reaches into the time or the period, the fold depends on each sample's own text:
// such a key's samples are folded one by one, with the frame lines of the first kept and only
// the event line printed anew.

#include "collapse/record_fold.h"

#include <utility>

#include "base/error.h"

namespace pf {

namespace {
constexpr uint64_t kSampleCallchain = 1 << 5;  // PERF_SAMPLE_CALLCHAIN
}  // namespace

RecordFold::RecordFold(const PerfScriptOptions& options, const std::string& event_filter,
                       std::string source_name)
    : opt_(options), folder_(options, event_filter), source_name_(std::move(source_name)) {
  fields_.srcline = opt_.srcline;  // perf script's default output (-F +srcline for --srcline)
  // --pid/--tid name the process, which perf script prints only with -F +pid: the
  // recording holds it, so the text folded is that of `perf script -F +pid`.
  fields_.pid = opt_.include_pid || opt_.include_tid;
}

void RecordFold::Fold(Session& session, Sample s, std::span<const uint64_t> chain, uint32_t key,
                      bool fresh) {
  uint64_t weight = opt_.weight_samples || s.period == 0 ? 1 : s.period;
  if (folder_.tree().unit() == WeightUnit::kUnspecified) folder_.tree().set_unit(UnitOf(s));
  // A sample folded as an earlier one was: its weight on the same leaf.
  auto fold_as = [&](NodeId leaf, bool filtered) {
    if (leaf != PerfScriptFolder::kNoLeaf) {
      folder_.tree().AddSelf(leaf, weight);
      ++samples_;
    } else if (filtered) {
      ++filtered_hits_;
    }
  };
  if (!fresh && cache_[key].reuse) {
    fold_as(cache_[key].leaf, cache_[key].filtered);
    return;
  }
  std::string_view comm = session.Comm(s.pid, s.tid);
  if (s.attr->sample_type & (1 << 8)) s.period = weight;  // the text carries the weight
  text_.clear();
  fields_.period = s.attr->sample_type & (1 << 8);
  fields_.cpu = false;
  fields_.time = s.attr->sample_type & (1 << 2);
  uint64_t filtered_before = folder_.other_event_samples();
  if (!fresh && !cache_[key].frames.empty()) {
    // A key folded sample by sample: only its event line is new.
    AppendSampleHead(session, s, fields_, &text_);
    text_ += cache_[key].frames;
    ++text_folds_;
    if (folder_.FoldSample(text_, source_name_) != PerfScriptFolder::kNoLeaf) ++samples_;
    return;
  }
  // A new chain of addresses often folds as an earlier one did: the fold reads names, not
  // addresses or offsets (a loop's samples differ in their leaf's address alone). So the
  // frames are keyed again by what the fold reads of them.
  session.Frames(s, chain, &frames_);
  XXH128_hash_t named_key = NamedKey(s, comm);
  if (auto n = named_.find(named_key); n != named_.end()) {
    if (fresh) Add(key, Cached{n->second.leaf, n->second.filtered, true, {}});
    fold_as(n->second.leaf, n->second.filtered);
    return;
  }
  AppendResolvedSample(session, s, fields_, frames_, &text_);
  ++text_folds_;
  NodeId leaf = folder_.FoldSample(text_, source_name_);
  // The key leaves out the time and the period, which the fold reads past the comm and
  // thread only when the Perl script's event-line pattern takes them into the comm (a
  // one-letter comm before a five-digit thread id: `w 19375  8425.338890:    1001001`
  // gives the comm `w 19375  8425.338890:`, a new one each sample). Such samples are
  // folded one by one. A match that ends within the comm and ids (`c  8261  9196.3:`
  // gives `c `, the same each time) depends on the key alone.
  EventHead event_head;
  size_t eol = text_.find('\n');
  std::string_view first_line = std::string_view(text_).substr(0, eol);
  bool reuse = false;
  if (MatchEventHead(first_line, &event_head)) {
    ScriptFields ids = fields_;
    ids.cpu = ids.time = ids.period = ids.event = false;
    ids_text_.clear();
    AppendSampleHead(session, s, ids, &ids_text_);
    size_t match_end = event_head.tid.data() + event_head.tid.size() - first_line.data();
    reuse = match_end < ids_text_.size() && first_line.starts_with(ids_text_);
  }
  if (fresh) {
    Cached c{leaf, folder_.other_event_samples() != filtered_before, reuse, {}};
    // (Without a call chain the frame is on the event line: such a key's samples are
    // each folded whole.)
    const bool frame_lines = !chain.empty() && (s.attr->sample_type & kSampleCallchain);
    if (!reuse && frame_lines && eol != std::string::npos) c.frames = text_.substr(eol);
    if (reuse) named_.emplace(named_key, Named{c.leaf, c.filtered});
    Add(key, std::move(c));
  }
  if (leaf != PerfScriptFolder::kNoLeaf) ++samples_;
}

WeightUnit RecordFold::UnitOf(const Sample& s) const {
  constexpr uint32_t kTypeSoftware = 1;              // PERF_TYPE_SOFTWARE
  constexpr uint64_t kCpuClock = 0, kTaskClock = 1;  // PERF_COUNT_SW_CPU_CLOCK, _TASK_CLOCK
  if (opt_.weight_samples || s.period == 0) return WeightUnit::kSamples;
  if (s.attr->type == kTypeSoftware &&
      (s.attr->config == kCpuClock || s.attr->config == kTaskClock)) {
    return WeightUnit::kNanoseconds;
  }
  return WeightUnit::kEvents;
}

void RecordFold::Add(uint32_t key, Cached c) {
  if (key != cache_.size()) throw Error(source_name_, "internal error: samples out of order");
  cache_.push_back(std::move(c));
}

// What the fold reads of a sample's frames: names, dsos, marks and source lines; the
// addresses only for --addrs ("[dso <addr>]"). The ip is printed only on the event line
// of a sample type without a call chain (AppendResolvedSample): a DWARF sample, whose
// recorded chain is empty (the kernel's part), names its leaf in a frame line, and the
// samples of a loop share a key whatever their leaf's address.
XXH128_hash_t RecordFold::NamedKey(const Sample& s, std::string_view comm) {
  bytes_.clear();
  auto add = [&](const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); };
  const bool ip_printed = !(s.attr->sample_type & kSampleCallchain);
  uint64_t head[6] = {reinterpret_cast<uintptr_t>(s.attr), s.pid, s.tid,
                      static_cast<uint64_t>(s.misc & 7), ip_printed ? s.ip : 0, comm.size()};
  add(head, sizeof head);
  add(comm.data(), comm.size());
  for (const ResolvedFrame& f : frames_) {
    uint64_t sizes[4] = {f.sym.size(), f.dso.size(), fields_.srcline ? f.srcline.size() : 0,
                         uint64_t{f.has_sym} | uint64_t{f.kernel} << 1 |
                             uint64_t{f.inlined} << 2};
    add(sizes, sizeof sizes);
    add(f.sym.data(), f.sym.size());
    add(f.dso.data(), f.dso.size());
    if (fields_.srcline) add(f.srcline.data(), f.srcline.size());
    if (opt_.include_addrs) add(&f.addr, sizeof f.addr);
  }
  return XXH3_128bits(bytes_.data(), bytes_.size());
}

}  // namespace pf
