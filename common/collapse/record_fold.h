#pragma once
// The fold of a recording's samples (collapse's own; record_fold.cpp says how it works):
// SampleKeys keys the samples by their addresses, each key with how its samples fold
// (KeyFold); RecordFold folds each as perf script's text of it would be folded, from the
// fields of its named frames, naming only what an earlier sample did not.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/checksum.h"
#include "base/flat_map.h"
#include "collapse/time_order.h"
#include "formats/perf_script.h"
#include "pfstream/session.h"
#include "pfstream/script_output.h"

namespace pf {

// How the samples of one key (SampleKeys) fold: RecordFold::Fold sets it at the key's first
// sample, and folds the later ones by it.
struct KeyFold {
  NodeId leaf = PerfScriptFolder::kNoLeaf;
  bool filtered = false;  // a sample of another event (not counted by the folder)
  bool reuse = false;     // false: the fold of this key's samples depends on their time (Fold)
};

// The key of a sample's fold by its addresses: event, thread, comm, maps generation and call
// chain, with its KeyFold beside it in the table (a sample that repeats one costs one lookup).
// The table holds at most kMaxKeys (or tests' test_seams::sample_key_keys) and is emptied when
// full: a key's fold is the one its NamedKey gives (RecordFold::Fold), so a key found fresh
// again folds as before. A system-wide capture's keys are mostly new (each of a build's
// processes has its own), and a table of them all cost more in page faults and cache misses
// than the repeats it saved (a 61 MB recording: 352k keys in 555k samples, 64 MB of slots).
// (Keys are hashed whole from a buffer: XXH3's streaming calls cost more than the bytes.)
// (Hash may run on one thread, for a Session that replays the same records, and Find on
// another.)
class SampleKeys {
 public:
  static constexpr size_t kMaxKeys = size_t{1} << 16;  // 4 MiB of slots

  /// `by_cpu`: samples of different CPUs are different keys (--per-cpu).
  explicit SampleKeys(bool by_cpu = false);

  /// `no_callchain`: the sample recorded no call chain (its ip stands for it).
  KeyFold& Find(Session& session, const Sample& s, std::span<const uint64_t> chain,
                bool no_callchain, bool* fresh) {
    return Find(Hash(session, s, chain, no_callchain), fresh);
  }
  XXH128_hash_t Hash(Session& session, const Sample& s, std::span<const uint64_t> chain,
                     bool no_callchain) {
    std::string_view comm = session.Comm(s.pid, s.tid);
    uint64_t head[8] = {reinterpret_cast<uintptr_t>(s.attr), s.pid, s.tid,
                        static_cast<uint64_t>(s.misc & 7), session.Generation(s.pid).value,
                        no_callchain ? s.ip : 0, comm.size(), by_cpu_ ? s.cpu : 0};
    bytes_.clear();
    bytes_.append(reinterpret_cast<const char*>(head), sizeof head);
    bytes_.append(comm);
    bytes_.append(reinterpret_cast<const char*>(chain.data()), chain.size() * 8);
    return Hash128(bytes_.data(), bytes_.size());
  }
  /// Asks the CPU to load where Find will look `key` up.
  void Prefetch(const XXH128_hash_t& key) const { folds_.Prefetch(key); }
  /// The fold of `key`'s samples; *fresh: the key is new, or was forgotten (its KeyFold
  /// unset). The reference stays valid until the next Find.
  KeyFold& Find(const XXH128_hash_t& key, bool* fresh) {
    if (folds_.size() >= max_keys_) folds_.Clear();
    return folds_.TryEmplace(key, KeyFold(), fresh);
  }

 private:
  std::string bytes_;
  FlatMap<XXH128_hash_t, KeyFold, Hash128Key, Equal128Key> folds_;
  size_t max_keys_ = kMaxKeys;
  bool by_cpu_;
};

// Folds samples keyed by SampleKeys, in their order: a key's first sample is named and folded
// from its frames' fields (PerfScriptFolder::BeginSample, AddFrame); the key's later samples
// fold as it did.
class RecordFold {
 public:
  RecordFold(const PerfScriptOptions& options, const std::string& event_filter,
             std::string source_name);
  /// The recording is read from a pipe (perf script prints tracepoints' frames otherwise).
  void set_pipe(bool pipe) { pipe_ = pipe; }
  /// With PerfScriptOptions::keep_times: each sample folded, its leaf and time, in order.
  std::vector<TimedSample> TakeTimed() { return std::move(timed_); }

  /// Folds `s`, whose call chain is `chain` and whose key's fold (SampleKeys) is `key`, first
  /// seen now when `fresh` (then set here).
  void Fold(Session& session, Sample s, std::span<const uint64_t> chain, KeyFold& key,
            bool fresh);

  PerfScriptFolder& folder() { return folder_; }
  uint64_t samples() const { return samples_; }

  /// What a sample's weight counts: its period, which is nanoseconds for the cpu-clock and
  /// task-clock events and events for the others, or 1 (--weight=samples, or no period).
  WeightUnit UnitOf(const Sample& s) const;
  /// Samples of other events, folded as an earlier sample of their key (not counted by the
  /// folder).
  uint64_t filtered_hits() const { return filtered_hits_; }
  /// Samples named and folded from their frames (the others folded as an earlier sample).
  uint64_t named_folds() const { return named_folds_; }

 private:
  struct Named {
    NodeId leaf;
    bool filtered;
  };

  // A sample as --time-order keeps it: in its thread's lane, or its CPU's for --per-cpu.
  TimedSample Timed(const Sample& s, NodeId leaf, uint64_t weight) const {
    if (opt_.include_cpu) return {kCpuLane, s.cpu, s.time, leaf, weight};
    return {s.pid, s.tid, s.time, leaf, weight};
  }
  XXH128_hash_t NamedKey(const Session& session, const Sample& s, std::string_view comm);
  // Folds `s`, whose frames are frames_; *reuse: the fold holds for the key's later samples.
  NodeId FoldNamed(Session& session, const Sample& s, std::string_view comm, bool* reuse);
  NodeId FoldText(Session& session, const Sample& s, bool* reuse);
  bool HeadIsPlain(const Sample& s, std::string_view comm);
  bool FramesArePlain();
  bool FrameIsPlain(const ResolvedFrame& f) const;
  bool HeadEndsInIds(Session& session, const Sample& s, std::string_view line);

  const PerfScriptOptions& opt_;
  PerfScriptFolder folder_;
  std::string source_name_;
  // A tracepoint's sample whose fields are printed (its recording has their formats).
  static bool Traced(const Sample& s);
  bool saw_traced_ = false, saw_period_ = false, unit_mixed_ = false;
  bool pipe_ = false;  // the recording is a pipe's (perf script's tracepoint fields differ)
  std::vector<TimedSample> timed_;  // PerfScriptOptions::keep_times: the samples folded
  ScriptFields fields_;
  FlatMap<XXH128_hash_t, Named, Hash128Key, Equal128Key> named_;
  std::vector<FrameId> frame_ids_;
  std::vector<ResolvedFrame> frames_;  // frame_ids_'s frames, when they are folded
  std::vector<uint8_t> plain_frames_;  // FramesArePlain's answers, by FrameId
  const EventAttr* plain_event_ = nullptr;  // HeadIsPlain's last event with a plain name
  std::string text_, ids_text_, bytes_;
  uint64_t samples_ = 0, filtered_hits_ = 0, named_folds_ = 0;
};

}  // namespace pf
