#pragma once
// The formats module (common/formats/): the text formats other tools write, read into the
// stack tree (perf script text here), and the sniffing that tells the formats apart (sniff.h).
//
// Folding `perf script` text, as FlameGraph's stackcollapse-perf.pl does it.
//
// The Perl script is the reference: users diff our output against it. Its two regular
// expressions are emulated exactly by hand-written scanners (see MatchEventHead and
// MatchStackLine), which are linear in the line length and allocation-free; the rare stack
// line whose match needs regex backtracking is handed to re2, which has the same
// leftmost-first semantics. On top of the Perl behaviour, and documented in pf-collapse(1):
//   - event lines indented by whitespace and event lines that carry their one-frame stack
//     (`perf script` without -g) are understood, as inferno does;
//   - parentheses inside template brackets `<...>` do not cut a C++ name, and frames whose
//     name starts with "(anonymous namespace)" are kept (Perl drops them);
//   - half-demangled Rust symbols are finished (`$LT$`, `..`, `::h<hash>`), as inferno does;
//   - a kernel frame is also recognised by a versioned vmlinux or a .ko module, a JIT frame
//     by a jitted-PID-N.so (perf inject --jit);
//   - event types are compared without perf's modifier suffix, so `--event-filter=cpu-clock`
//     keeps `cpu-clock:ppp` samples;
//   - CRLF line ends and whitespace-only lines are tolerated.
//
// The folder reads a sample as fields (SampleHead, then ScriptFrame after ScriptFrame): the text
// reader parses them from the lines, a recording's fold (collapse/record_fold.h) gives them
// from its samples' named frames; both fold through BeginSample, AddFrame and EndSample, so
// the Perl script's per-sample and per-frame rules (frame_names.h) are written once.
//
// Speed: two caches. A sample whose frames were seen before, under the same root frame, is
// recognised by one 128-bit hash of its stack lines' text without their addresses and offsets
// (no name depends on them; the address is kept where it names the frame, --addrs) and lands
// on its tree leaf directly: its lines cost a scan each, no naming and no tree walk. Otherwise
// each distinct frame is named once and cached (key: its line's text so cut, or a recording
// frame's fields); a new sample asks for all its frames' cache slots before the first lookup,
// and a frame of one name finds the name's id in its slot, so the per-line cost is a hash, a
// probe and a tree step.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "formats/frame_names.h"
#include "stacks/stack_tree.h"

namespace pf {

class LineSplitter;
class StackList;

struct PerfScriptOptions {
  bool include_pid = false;     // --pid: root frame "comm-PID"
  bool include_tid = false;     // --tid: root frame "comm-PID/TID"
  bool include_cpu = false;     // --per-cpu: a root frame "[cpu NNN]" above the comm
  bool annotate_kernel = false; // --kernel: "_[k]"
  bool annotate_jit = false;    // --jit: "_[j]"
  bool annotate_inline = false; // --inline: "_[i]" on frames perf printed as "(inlined)"
  bool srcline = false;         // --srcline: a source line follows each frame line
  bool inline_frames = true;    // recordings: expand inline frames (--no-inline clears it)
  bool include_addrs = false;   // --addrs: "[dso <addr>]" for unknown symbols
  bool weight_samples = false;  // --weight=samples: 1 per sample instead of the period
  bool note_modules = false;    // note each frame's module in the tree (pf-dot's labels)
  bool keep_cxx_names = false;  // keep "operator()" and "{lambda(int)#1}" whole (pf-dot)
  bool keep_times = false;      // recordings: each sample's leaf and time (--time-order)
  std::string event_filter;     // --event-filter; empty: the first event type seen
  std::vector<std::string> skip_after;  // --skip-after
};

/// The event of off-CPU waits, perf record --off-cpu's and pf-record's (perf/off_cpu.h writes
/// it): each sample a wait, its period the nanoseconds it lasted.
inline constexpr std::string_view kOffCpuEvent = "offcpu-time";

/// The fields of a perf script event line (Perl: /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/).
struct EventHead {
  std::string_view comm, pid, tid;  // tid empty when perf printed one number
};
bool MatchEventHead(std::string_view line, EventHead* head);

/// The period and event of an event line (Perl: /:\s*(\d+)*\s+(\S+):\s*$/).
bool MatchEventTail(std::string_view line, std::string_view* period, std::string_view* event);

/// The fields of a stack line (Perl: /^\s*(\w+)\s*(.+) \((.*)\)/).
struct StackLine {
  std::string_view pc, func, dso;
};
bool MatchStackLine(std::string_view line, StackLine* out);

/// The event name without perf's modifier suffix: "cpu-clock:ppp" -> "cpu-clock",
/// "sched:sched_switch" stays.
std::string_view EventKey(std::string_view event);

/// The event type of the first event line in `data` that names one, as the Perl script picks
/// its default filter; false if there is none.
bool FindFirstEvent(std::string_view data, std::string* event);

/// Folds perf script text into a StackTree. Feed it blocks that start at a sample boundary
/// (after an empty line, or at the start of the input); each block is finished as if the
/// input ended there. One folder per thread; merge their trees afterwards.
class PerfScriptFolder {
 public:
  static constexpr NodeId kNoLeaf = StackTree::kRoot;  // the root: no sample ends there
  /// `event_filter` is the resolved filter (the option, or the first event seen).
  PerfScriptFolder(const PerfScriptOptions& options, std::string event_filter);
  /// Folding into `list` (its names, its distinct stacks) instead of tree(), for a writer of
  /// sorted folded text that needs no tree (a tree's node per distinct prefix is a hash probe
  /// per frame of a new stack). A leaf (EndSample, last_leaf) is then the stack's index in
  /// the list plus one. Not with options.note_modules: a list keeps no modules.
  PerfScriptFolder(const PerfScriptOptions& options, std::string event_filter, StackList* list);
  ~PerfScriptFolder();

  /// Returns the lines of `data` (BlockReader::CountedLines).
  uint64_t AddBlock(std::string_view data, uint64_t first_line, const std::string& file);

  /// A sample's event line as the Perl script reads it (MatchEventHead, MatchEventTail).
  struct SampleHead {
    std::string_view comm, pid, tid;  // tid empty when perf printed one number
    std::string_view period;          // digits, or "" when the line has none
    std::string_view event;           // "" when the line names none
    bool one_line = false;  // the frame is on the event line: its event picks no filter
    std::string_view cpu;   // perf's "[003]" without brackets ("" when none)
  };
  /// Folding a sample given as fields: BeginSample, AddFrame for each frame (leaf first), then
  /// EndSample. BeginSample applies the event filter (false: the sample is filtered out; fold
  /// none of its frames), takes its period and names its root frame (the comm; comm-PID for
  /// --pid, comm-PID/TID for --tid).
  bool BeginSample(const SampleHead& head);
  /// BeginSample from an event line of perf script text, read as AddBlock reads it: false
  /// when the line starts no sample (filtered out, or not an event line).
  bool BeginSampleLine(std::string_view line);
  /// The next frame of the sample begun, named as frame_names.h says (and cached).
  void AddFrame(const ScriptFrame& frame);
  /// Ends the sample; returns its leaf (kNoLeaf when nothing was added).
  NodeId EndSample();
  /// A sample is begun (its frames wanted).
  bool in_sample() const { return in_sample_; }
  /// The leaf of the last sample ended since BeginSample or BeginSampleLine (kNoLeaf: none).
  NodeId last_leaf() const { return last_leaf_; }
  /// Folds one sample given as perf script text; returns its leaf, or kNoLeaf when the
  /// sample added nothing (filtered out, or no frames).
  NodeId FoldSample(std::string_view text, const std::string& file);

  StackTree& tree() { return tree_; }
  /// Where the names go: the list's, or the tree's.
  Interner& names();
  uint64_t samples() const { return samples_; }
  /// Samples whose stack was seen before under the same root frame, folded from the cache.
  uint64_t cached_samples() const { return cached_samples_; }
  /// Of those, the samples found by their text as it is (no line read).
  uint64_t cached_texts() const { return cached_texts_; }
  /// Samples dropped because of their event type, and those types.
  uint64_t other_event_samples() const { return other_event_samples_; }
  const std::vector<std::string>& other_events() const { return other_events_; }
  const SkipCount& skipped_lines() const { return skipped_; }
  /// With --per-cpu: the first line of a sample that shows no CPU (0: none did). Such a
  /// sample is left out; the input cannot be folded by CPU.
  uint64_t no_cpu_line() const { return no_cpu_line_; }
  /// The event filter in force: the option, or the first event type seen so far.
  const std::string& event_filter() const { return event_filter_; }
  /// What the tree's weights count (stackcollapse-perf.pl sums the periods perf script
  /// prints, else 1 a sample): nanoseconds for periods of cpu-clock and task-clock, events
  /// for other events' periods, samples without periods (or --weight=samples); unspecified
  /// when some samples had a period and others not, or none was folded.
  WeightUnit Unit() const;
  /// Sets the filter found by whoever reads ahead, unless one is already in force.
  void SetEventFilter(const std::string& event) {
    if (event_filter_.empty() && !event.empty()) SetFilter(event);
  }

 private:
  struct Cached;
  void OnEvent(std::string_view line, const EventHead& head);
  // A stack line; with --srcline it waits for the source line that may follow it.
  void OnStackLine(std::string_view line, const StackLine& sl);
  // With --srcline: the source line of the waiting frame, or a frame without its dso.
  bool TakeSrcline(std::string_view line);
  bool TakeBareFrame(std::string_view line);
  void FlushPending(std::string_view srcline);
  void OnStack(const StackLine& sl, std::string_view srcline = {});
  // After an event line: the sample's stack lines, folded at once (from the sample cache when
  // they were seen before), unless one of them needs AddBlock's line-by-line rules.
  void FoldStackLines(LineSplitter* lines, uint64_t* line_no, const std::string& file);
  // A stack line's part of a sample's key (also its frame's key, under kLineKeySeed).
  char* AppendLineKey(std::string_view line, StackLine* sl, char* out) const;
  // The frame cache's seeds: AppendFrameKey's keys under 2 (3 under a Java comm), a stack
  // line's (AppendLineKey) under 4 (5): the two kinds of key never meet.
  static constexpr uint64_t kLineKeySeed = 4;
  // A frame's key: the fields its names depend on (NameFrame), each after its length.
  void AppendFrameKey(std::string_view name, std::string_view dso, std::string_view srcline,
                      std::string_view pc, std::string* key) const;
  void Push(const Cached& c);
  // A frame key's 128-bit hash (XXH3 with `seed`), and a request for the cache slot where
  // its lookup starts (a sample's new frames ask for all theirs before the first lookup).
  struct KeyHash {
    uint64_t low = 0, high = 0;
  };
  static KeyHash HashKey(std::string_view key, uint64_t seed);
  void PrefetchFrame(KeyHash hash) const;
  // The cached names of the frame whose key has `hash`; on a miss, the names of
  // make_frame()'s frame (a ScriptFrame), cached.
  template <typename MakeFrame>
  Cached Transform(KeyHash hash, MakeFrame make_frame);
  void NoteOtherEvent(std::string_view event);
  // The filter: one event, or several separated by commas (`filter_keys_`).
  void SetFilter(std::string filter);
  bool KeepsEvent(std::string_view event) const;
  // The seed of a sample's key in the sample cache: its root frame, and whether it is marked.
  uint64_t SampleSeed() const {
    return pname_.value | (uint64_t{off_cpu_sample_} << 32) | (uint64_t{cpu_root_.value} << 33);
  }
  // --per-cpu: the sample's CPU frame, "[cpu NNN]" (NNN as perf prints it); false when
  // `cpu` is not digits.
  bool SetCpuRoot(std::string_view cpu);
  static std::string_view FindCpu(std::string_view line, size_t ids_end);
  void NoteNoCpu(uint64_t line_no) {
    if (!no_cpu_line_) no_cpu_line_ = line_no;
    cpu_missing_ = false;
  }
  // Adds `weight` to a leaf EndSample gave (the tree's node, or the list's stack).
  void AddToLeaf(NodeId leaf, uint64_t weight);
  // Ends a sample whose leaf a cache gave (kNoLeaf: one that adds nothing).
  void TakeCachedLeaf(NodeId leaf);
  // Ends the sample at `lines` when its text, up to an empty line, was seen before (then
  // true: `lines` is at the empty line). Otherwise gives where the text ends (null: no empty
  // line, or not looked for) and its hash, for the text's entry once its lines are read.
  bool FoldRepeatedText(LineSplitter* lines, uint64_t* line_no, const char** text_end,
                        KeyHash* text_key);

  const PerfScriptOptions& opt_;
  std::string event_filter_;
  std::string event_filter_key_;
  std::vector<std::string> filter_keys_;  // a filter of several events: each one's EventKey
  // A filter of offcpu-time and other events: the off-CPU samples get kOffCpuFrame on top.
  bool mark_off_cpu_ = false;
  bool off_cpu_sample_ = false;  // the sample begun is one to mark
  StrId off_cpu_frame_;
  bool off_cpu_frame_named_ = false;
  StackTree tree_;
  StackList* list_ = nullptr;  // folding into it instead

  // The sample being read (Perl: $pname, $m_period, @stack).
  bool in_sample_ = false;
  bool after_filtered_ = false;
  bool skip_remaining_ = false;
  bool java_ = false;
  StrId pname_;
  StrId cpu_root_;                // --per-cpu: the sample's "[cpu NNN]"
  std::vector<StrId> cpu_roots_;  // by CPU number, interned as met (0: not yet)
  bool cpu_missing_ = false;      // the last event line showed no CPU
  uint64_t no_cpu_line_ = 0;
  struct RecentRoot {
    std::string raw;  // the comm (and PID/TID), its characters not yet replaced
    StrId id;
    bool java = false;
    bool named = false;
  };
  std::array<RecentRoot, 8> recent_roots_;  // BeginSample's last root frames, interned
  size_t next_root_ = 0;
  size_t last_root_ = 0;  // the root of the last sample
  uint64_t period_ = 1;
  uint64_t with_period_ = 0, without_period_ = 0;  // event lines kept, for Unit()
  std::vector<StrId> rev_frames_;  // leaf first, each line's group reversed
  std::vector<StrId> path_;
  std::string scratch_;
  std::string pending_;      // --srcline: the frame line waiting for its source line
  bool pending_bare_ = false;

  // Cache of transformed stack lines: key -> frames.
  struct Cache;
  std::unique_ptr<Cache> cache_;
  // Cache of whole samples: hash of (root frame, frames' keys) -> leaf.
  struct SampleCache;
  std::unique_ptr<SampleCache> samples_cache_;

  uint64_t samples_ = 0;
  uint64_t cached_samples_ = 0;
  uint64_t cached_texts_ = 0;
  NodeId last_leaf_ = kNoLeaf;
  uint64_t other_event_samples_ = 0;
  std::vector<std::string> other_events_;
  SkipCount skipped_;
};

}  // namespace pf
