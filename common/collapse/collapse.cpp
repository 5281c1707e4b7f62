#include "collapse/collapse.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "base/bounded_queue.h"
#include "base/cpu.h"
#include "base/error.h"
#include "base/teardown.h"
#include "base/thread_name.h"
#include "formats/sniff.h"
#include "io/line_reader.h"
#include "io/page_ahead.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "stacks/folded.h"
#include "unwind/unwinder.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

namespace {

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string SkippedMessage(const SkipCount& s, const char* what) {
  return Plural(s.count, "line", "lines") + " skipped" + what + ", first at " +
         Where(s.first_file, s.first_line);
}

using BlockQueue = BoundedQueue<std::pair<Block, std::string>>;

struct Hash128 {
  size_t operator()(const XXH128_hash_t& k) const { return k.low64; }
};
struct Equal128 {
  bool operator()(const XXH128_hash_t& a, const XXH128_hash_t& b) const {
    return a.low64 == b.low64 && a.high64 == b.high64;
  }
};

// The key of a sample's fold by its addresses: event, thread, comm, maps generation and call
// chain. Keys are numbered in the order they first appear.
// (Keys are hashed whole from a buffer: XXH3's streaming calls cost more than the bytes.)
// (Hash may run on one thread, for a Session that replays the same records, and Number on
// another.)
class SampleKeys {
 public:
  /// `no_callchain`: the sample recorded no call chain (its ip stands for it).
  uint32_t Key(Session& session, const Sample& s, std::span<const uint64_t> chain,
               bool no_callchain, bool* fresh) {
    return Number(Hash(session, s, chain, no_callchain), fresh);
  }
  XXH128_hash_t Hash(Session& session, const Sample& s, std::span<const uint64_t> chain,
                     bool no_callchain) {
    std::string_view comm = session.Comm(s.pid, s.tid);
    uint64_t head[7] = {reinterpret_cast<uintptr_t>(s.attr), s.pid, s.tid,
                        static_cast<uint64_t>(s.misc & 7), session.MapsGeneration(s.pid),
                        no_callchain ? s.ip : 0, comm.size()};
    bytes_.clear();
    bytes_.append(reinterpret_cast<const char*>(head), sizeof head);
    bytes_.append(comm);
    bytes_.append(reinterpret_cast<const char*>(chain.data()), chain.size() * 8);
    return XXH3_128bits(bytes_.data(), bytes_.size());
  }
  uint32_t Number(const XXH128_hash_t& key, bool* fresh) {
    auto [it, inserted] = ids_.try_emplace(key, static_cast<uint32_t>(ids_.size()));
    *fresh = inserted;
    return it->second;
  }

 private:
  std::string bytes_;
  std::unordered_map<XXH128_hash_t, uint32_t, Hash128, Equal128> ids_;
};

constexpr uint64_t kSampleCallchain = 1 << 5;  // PERF_SAMPLE_CALLCHAIN

// Folds samples keyed by SampleKeys, in their order: a key's first sample is named and
// turned into perf script's text; the key's later samples fold as it did.
class RecordFold {
 public:
  RecordFold(const PerfScriptOptions& options, const std::string& event_filter,
             std::string source_name)
      : opt_(options), folder_(options, event_filter), source_name_(std::move(source_name)) {
    fields_.srcline = opt_.srcline;  // perf script's default output (-F +srcline for --srcline)
    // --pid/--tid name the process, which perf script prints only with -F +pid: the
    // recording holds it, so the text folded is that of `perf script -F +pid`.
    fields_.pid = opt_.include_pid || opt_.include_tid;
  }

  void Fold(Session& session, Sample s, std::span<const uint64_t> chain, uint32_t key,
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

  PerfScriptFolder& folder() { return folder_; }
  uint64_t samples() const { return samples_; }

  /// What a sample's weight counts: its period, which is nanoseconds for the cpu-clock and
  /// task-clock events and events for the others, or 1 (--weight=samples, or no period).
  WeightUnit UnitOf(const Sample& s) const {
    constexpr uint32_t kTypeSoftware = 1;              // PERF_TYPE_SOFTWARE
    constexpr uint64_t kCpuClock = 0, kTaskClock = 1;  // PERF_COUNT_SW_CPU_CLOCK, _TASK_CLOCK
    if (opt_.weight_samples || s.period == 0) return WeightUnit::kSamples;
    if (s.attr->type == kTypeSoftware && (s.attr->config == kCpuClock || s.attr->config == kTaskClock)) {
      return WeightUnit::kNanoseconds;
    }
    return WeightUnit::kEvents;
  }
  /// Samples of other events, folded as an earlier sample of their key (not counted by the
  /// folder).
  uint64_t filtered_hits() const { return filtered_hits_; }
  /// Samples folded through their perf script text.
  uint64_t text_folds() const { return text_folds_; }

 private:
  struct Cached {
    NodeId leaf;
    bool filtered;
    bool reuse;  // false: the fold of this key's samples depends on their time (Fold)
    std::string frames;  // then: the frame lines of their text, after the event line
  };
  struct Named {
    NodeId leaf;
    bool filtered;
  };

  void Add(uint32_t key, Cached c) {
    if (key != cache_.size()) throw Error(source_name_, "internal error: samples out of order");
    cache_.push_back(std::move(c));
  }

  // What the fold reads of a sample's frames: names, dsos, marks and source lines; the
  // addresses only for --addrs ("[dso <addr>]"). The ip is printed only on the event line
  // of a sample type without a call chain (AppendResolvedSample): a DWARF sample, whose
  // recorded chain is empty (the kernel's part), names its leaf in a frame line, and the
  // samples of a loop share a key whatever their leaf's address.
  XXH128_hash_t NamedKey(const Sample& s, std::string_view comm) {
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

  const PerfScriptOptions& opt_;
  PerfScriptFolder folder_;
  std::string source_name_;
  ScriptFields fields_;
  std::vector<Cached> cache_;  // by key
  std::unordered_map<XXH128_hash_t, Named, Hash128, Equal128> named_;
  std::vector<ResolvedFrame> frames_;
  std::string text_, ids_text_, bytes_;
  uint64_t samples_ = 0, filtered_hits_ = 0, text_folds_ = 0;
};

// What the reading stage hands the folding one, in order: the records that change maps and
// comms (their bodies copied), the samples it unwound (scalars and chain), and the samples it
// left to the folding stage to unwind (where they are in the mapped file).
struct FoldBatch {
  struct Item {
    uint32_t type = 0;  // kRecordSample, or the record's
    uint16_t misc = 0;
    bool unwound = false;
    bool raw = false;          // a sample left whole, for the folding thread to unwind
    bool not_selected = false;  // a sample left out by its thread: only its thread looked up
    XXH128_hash_t key{};       // an unwound sample's (SampleKeys::Hash)
    size_t at = 0, words = 0;  // the record's body or the sample's chain, in `words`
    size_t bytes = 0;          // a record's body size
    Sample sample;             // a sample's scalars (and, left whole, its spans)
  };
  std::vector<Item> items;
  std::vector<uint64_t> words;
  // The mapped file's records before this are done with once the batch is (ReplayOrdered).
  const uint8_t* release = nullptr;

  static constexpr size_t kItems = 512;
  /// Empty, its memory kept.
  void Clear() {
    items.clear();
    words.clear();
    release = nullptr;
  }
  void AddRecord(const Record& r) {
    Item& item = items.emplace_back();
    item.type = r.type;
    item.misc = r.misc;
    item.at = words.size();
    item.words = (r.body.size() + 7) / 8;
    item.bytes = r.body.size();
    words.resize(item.at + item.words, 0);
    if (!r.body.empty()) std::memcpy(words.data() + item.at, r.body.data(), r.body.size());
  }
  void AddSample(const Sample& s, std::span<const uint64_t> chain, const XXH128_hash_t& key) {
    Item& item = items.emplace_back();
    item.type = kRecordSample;
    item.key = key;
    item.unwound = chain.data() != s.callchain.data();
    item.sample = s;
    item.sample.callchain = {};
    item.sample.regs_user = {};
    item.sample.stack_user = {};
    item.at = words.size();
    item.words = chain.size();
    words.insert(words.end(), chain.begin(), chain.end());
  }
  // A sample the selection left out once its thread was looked up (which the folding
  // thread's Session must do too: it names a thread never seen).
  void AddNotSelected(const Sample& s) {
    Item& item = items.emplace_back();
    item.type = kRecordSample;
    item.not_selected = true;
    item.sample.pid = s.pid;
    item.sample.tid = s.tid;
  }
  // A sample parsed, its spans into the mapped file (which stays mapped until it is folded).
  void AddWhole(const Sample& s) {
    Item& item = items.emplace_back();
    item.type = kRecordSample;
    item.raw = true;
    item.sample = s;
  }
};

// Who gives a mapped recording's pages back to the kernel when it is folded in two stages
// (unmapping costs about as much as mapping): the folding thread, behind the batches it has
// folded, while the reading thread reads and faults every page in (the busier of the two);
// then the reading thread, behind the folding one, while that one folds what is queued.
// Either way a page goes only once the samples in it are folded, as the folding thread may
// unwind them from the file.
class PageReturn {
 public:
  explicit PageReturn(PerfDataReader& reader) : reader_(reader) {}
  /// The folding thread: the records before `p` are folded.
  void Folded(const uint8_t* p) {
    std::lock_guard lock(mu_);
    folded_ = p;
    if (reader_idle_) {
      changed_.notify_one();
    } else {
      reader_.ReleaseBefore(p);  // in steps (PerfDataReader::ReleaseBefore)
    }
  }
  /// The folding thread is done, or gave up.
  void Done() {
    std::lock_guard lock(mu_);
    done_ = true;
    changed_.notify_one();
  }
  /// The reading thread, done reading: gives pages back behind the folding thread until it
  /// is done. What is left when it is goes with the mapping.
  void ReturnBehind() {
    std::unique_lock lock(mu_);
    reader_idle_ = true;  // from here on the folding thread calls no ReleaseBefore
    const uint8_t* returned = nullptr;
    for (;;) {
      changed_.wait(lock, [&] { return done_ || folded_ != returned; });
      if (done_) return;
      returned = folded_;
      lock.unlock();
      reader_.ReleaseBefore(returned, 0);
      lock.lock();
    }
  }

 private:
  PerfDataReader& reader_;
  std::mutex mu_;
  std::condition_variable changed_;
  const uint8_t* folded_ = nullptr;
  bool reader_idle_ = false, done_ = false;
};

class Collapser {
 public:
  // Compiles the filters first, so a bad pattern fails before any input is read.
  Collapser(const CollapseOptions& options, CollapseReport* report)
      : opt_(options), report_(report), filter_(options.filter), select_(options.select) {
    threads_ = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    event_filter_ = options.perf.event_filter;
  }

  void Add(ByteSource& source) {
    std::string_view head = source.Peek();
    std::string foreign;
    InputFormat format = SniffFormat(head, &foreign);
    ++report_->inputs;
    // A forced format (-f) reads any text as that format; a recording stays one.
    bool text = format == InputFormat::kFolded || format == InputFormat::kPerfScript ||
                format == InputFormat::kForeign;
    if (text && format == InputFormat::kForeign && opt_.format != "auto") {
      report_->warnings.push_back(source.name() + ": this looks like " + foreign +
                                  ", read as " + opt_.format + " because -f says so");
    }
    if (opt_.format == "perf-script" && text) {
      format = InputFormat::kPerfScript;
    } else if (opt_.format == "folded" && text) {
      format = InputFormat::kFolded;
    } else if (opt_.format == "folded" && format == InputFormat::kPerfData) {
      throw Error(source.name(), "a perf.data recording, not folded stacks (drop -f folded)");
    }
    switch (format) {
      case InputFormat::kEmpty:
        ++report_->empty_inputs;
        return;
      case InputFormat::kPerfData:
        ++report_->recordings;
        AddPerfData(source);
        return;
      case InputFormat::kBinary:
        throw Error(source.name(),
                    std::string("binary data, not a format pf reads; pf reads ") + kFormatsPfReads);
      case InputFormat::kForeign:
        throw Error(source.name(), "this looks like " + foreign +
                                       ", which pf does not read; pf reads " + kFormatsPfReads);
      case InputFormat::kFolded:
        RefuseSelection(source, "folded stacks");
        AddFolded(source);
        return;
      case InputFormat::kPerfScript:
        RefuseSelection(source, "`perf script` text");
        AddPerfScript(source);
        return;
    }
  }

  /// The folded result, filtered; notices added to the report.
  StackTree TakeTree() {
    if (other_event_samples_ && opt_.perf.event_filter.empty()) {
      std::string others;
      for (const std::string& e : other_events_) others += (others.empty() ? "" : ", ") + e;
      report_->notices.push_back("kept the samples of the first event type, " + event_filter_ +
                                 "; skipped " + Plural(other_event_samples_, "sample", "samples") +
                                 " of " + others + " (choose with --event-filter=EVENT)");
    }
    if (!tree_) tree_.emplace(1);
    report_->event = event_filter_;
    report_->other_event_samples = other_event_samples_;
    for (const auto* f : {&opt_.filter.include, &opt_.filter.exclude, &opt_.filter.hide}) {
      if (!f->empty()) {
        report_->filters.push_back(f == &opt_.filter.include   ? "--include"
                                   : f == &opt_.filter.exclude ? "--exclude"
                                                               : "--hide");
      }
    }
    StackTree out = opt_.filter.empty() ? std::move(*tree_) : filter_.Apply(*tree_);
    if (out.Total(0) == 0 && out.Total(out.columns() - 1) == 0) {
      NoteEmptyResult(opt_.filter.empty() ? out : *tree_, report_);
    }
    return out;
  }

 private:
  StackTree& Tree(int columns, const std::string& name) {
    if (!tree_) tree_.emplace(columns);
    if (tree_->columns() != columns) {
      throw Error(name, columns == 2
                            ? "has two counts per line (a differential profile) and cannot be "
                              "merged with one-count profiles"
                            : "has one count per line and cannot be merged with differential "
                              "(two-count) profiles");
    }
    return *tree_;
  }

  void NoteOverlong(const BlockReader& reader, const std::string& name) {
    if (reader.overlong_lines()) {
      report_->warnings.push_back(Plural(reader.overlong_lines(), "line", "lines") +
                                  " longer than 16 MiB skipped, first at " +
                                  Where(name, reader.first_overlong_line()));
    }
  }

  void AddFolded(ByteSource& source) {
    // The first parseable line decides between one and two counts.
    int columns = 1;
    {
      LineSplitter lines(source.Peek());
      std::string_view line;
      FoldedLine fl;
      while (lines.Next(&line)) {
        if (IsFoldedIgnorable(line)) continue;
        if (ParseFoldedLine(line, 0, &fl)) {
          columns = fl.ncounts;
          break;
        }
      }
    }
    StackTree& tree = Tree(columns, source.name());
    // --skip-after cuts folded stacks as it cuts perf script's: read apart, cut, merge.
    std::optional<StackTree> uncut;
    if (!opt_.perf.skip_after.empty()) uncut.emplace(columns);
    FoldedReader reader(uncut ? *uncut : tree);
    BlockReader blocks(source, BlockReader::kLineBoundary);
    Block block;
    while (blocks.Next(&block)) {
      reader.AddBlock(block.data, block.first_line, source.name());
      if (block.releasable) ReleaseInput(block.data);
    }
    NoteOverlong(blocks, source.name());
    if (reader.stacks_read() == 0 && reader.malformed().count) {  // (read as folded by -f)
      throw Error(Where(source.name(), reader.malformed().first_line),
                  "nothing in the input parsed as folded stacks (" +
                      Plural(reader.malformed().count, "line", "lines") +
                      " not `stack count`); pf reads " + kFormatsPfReads);
    }
    if (uncut) tree.Merge(CutAtInnermost(*uncut, opt_.perf.skip_after, true, false));
    if (reader.malformed().count) {
      report_->warnings.push_back(SkippedMessage(reader.malformed(), " (not `stack count`)"));
      report_->skipped_lines += reader.malformed().count;
    }
    if (reader.cut_fractions()) {
      report_->warnings.push_back(source.name() + ": " +
                                  Plural(reader.cut_fractions(), "count", "counts") + " had more than " +
                                  std::to_string(kMaxDecimals) + " decimals; the rest was dropped");
    }
    report_->folded_lines += reader.stacks_read();
    for (const std::string& c : reader.pf_comments()) report_->pf_comments.push_back(c);
  }

  // A recording (pf-record stream or perf.data): the result equals folding pf-script's text,
  // because that is how each distinct sample is folded; but a sample is first folded by its
  // addresses (event, thread, comm, maps generation, call chain) and only a new one is
  // symbolized and turned into text, so repeated stacks cost a hash and a lookup.
  //
  // A perf.data file is folded in two stages on two threads when there are two: one reads
  // the records in time order, the other keys, names and folds the samples (SampleKeys,
  // RecordFold); the two share the unwinding of stack copies as their loads allow (the
  // reading thread unwinds a batch itself while the folding thread has batches waiting, and
  // leaves it to that thread otherwise). Each stage replays the maps and comms in its own
  // Session, in the same order; the first hands the second, in batches, the records that
  // change them and each sample: its scalars and chain, or where it is in the mapped file.
  // A pipe's stream may announce events and build-ids as it goes, which both stages would
  // read: it is folded on one.
  void AddPerfData(ByteSource& source) {
    StackTree& tree = Tree(1, source.name());
    PerfDataReader reader(source);
    SampleSelection select = select_;
    select.Bind(reader);  // (--time's percentages are of this recording)
    SampleKeys keys;
    // Two stages on two threads for a file big enough to gain from them (starting the
    // second Session and thread costs about a millisecond). The reading thread starts first:
    // it is the one with work to do at once.
    bool pipelined =
        threads_ >= 2 && !reader.pipe_mode() && reader.data_size() >= opt_.two_stage_bytes;
    std::unique_ptr<Symbolizer> reading_symbolizer;
    std::unique_ptr<Session> reading_session;
    // Batches of records and samples, from the reading thread to the folding one, which
    // hands the batches it is done with back (their memory stays mapped for the next).
    BoundedQueue<FoldBatch> channel(8);
    std::mutex spares_mu;
    std::vector<FoldBatch> spares;
    std::exception_ptr reading_error;
    std::thread reading_thread;
    PageReturn pages(reader);
    // The folding thread maps the pages ahead of the reading one while it waits (the reading
    // thread is the longer stage; io/page_ahead.h).
    PageAhead ahead(reader.mapped());
    if (pipelined) {
      reading_symbolizer = NewSymbolizer(reader);
      reading_session = std::make_unique<Session>(*reading_symbolizer);
      reading_session->ForgetExited(true);
      const int folding_cpu = CurrentCpu();
      auto read_stage = [&, folding_cpu] {  // (the block ends before the thread does)
        try {
          NameThisThread("pf-read");
          // Both stages are busy from the start: each on a CPU of its own (base/cpu.h).
          LeaveCpu(folding_cpu);
          Session& reading = *reading_session;
          std::vector<uint64_t> chain_scratch;
          SampleKeys hashes;  // Hash only
          FoldBatch batch;
          const uint8_t* release = nullptr;
          bool unwind_here = false;  // for the batch being filled
          size_t sent = 0;
          // Samples to unwind here wait in a run, to be unwound together
          // (Session::Callchains), until a record that is not such a sample comes.
          constexpr size_t kRun = 16;
          Sample run[kRun];
          const Sample* run_samples[kRun];
          std::vector<uint64_t> run_scratch[kRun];
          std::span<const uint64_t> run_chains[kRun];
          size_t run_size = 0;
          auto unwind_run = [&] {
            if (run_size == 0) return;
            for (size_t k = 0; k < run_size; ++k) run_samples[k] = &run[k];
            reading.Callchains(std::span<const Sample* const>(run_samples, run_size), run_scratch,
                               run_chains);
            for (size_t k = 0; k < run_size; ++k) {
              batch.AddSample(run[k], run_chains[k],
                              hashes.Hash(reading, run[k], run_chains[k], run[k].callchain.empty()));
            }
            run_size = 0;
          };
          auto send = [&] {
            unwind_run();
            ++sent;
            batch.release = release;
            if (!channel.Push(std::move(batch))) throw BoundedQueue<FoldBatch>::Cancelled();
            batch = FoldBatch();
            std::lock_guard lock(spares_mu);
            if (!spares.empty()) {
              batch = std::move(spares.back());
              spares.pop_back();
            }
          };
          ReplayOrdered(
              reader,
              [&](const Record& r) {
                ahead.ReaderAt(r.body.data());
                if (batch.items.empty() && run_size == 0) {
                  // The folding thread is busy starting (its first batches) or has batches
                  // waiting: unwound here. Else it is about to wait: left to it.
                  unwind_here = opt_.two_stage_unwind == 0
                                    ? sent < 4 || channel.size() >= 2
                                    : opt_.two_stage_unwind < 0;
                }
                if (r.type != kRecordSample) {
                  unwind_run();  // with the maps before this record
                  reading.OnRecord(reader, r);
                  // The records that change a Session's maps, comms and build-ids
                  // (Session::OnRecord).
                  if (r.type != kRecordComm && r.type != kRecordFork && r.type != kRecordExit &&
                      r.type != kRecordMmap && r.type != kRecordMmap2 &&
                      r.type != kRecordHeaderBuildId) {
                    return;
                  }
                  batch.AddRecord(r);
                } else {
                  Sample s;
                  if (!reader.ParseSample(r, &s)) return;
                  // The selection, as perf tests it: time and CPU before the thread.
                  if (!select.KeepsTimeAndCpu(s)) return;
                  if (select.filters_threads() &&
                      !select.KeepsThread(s, reading.Comm(s.pid, s.tid))) {
                    batch.AddNotSelected(s);
                  } else if (!unwind_here && r.stable) {
                    unwind_run();
                    // Asking a thread's comm names a thread never named ":TID", which
                    // changes what a later COMM or FORK does (as in perf): both Sessions ask
                    // for every sample the folding thread will fold.
                    reading.Comm(s.pid, s.tid);
                    batch.AddWhole(s);
                  } else if (r.stable) {
                    // A DWARF sample's chain is unwound here (its recorded chain is the
                    // kernel's part), with the samples after it.
                    run[run_size++] = s;
                    if (run_size == kRun) unwind_run();
                  } else {  // its bytes go with the next record: unwound now
                    unwind_run();
                    std::span<const uint64_t> chain = reading.Callchain(s, &chain_scratch);
                    batch.AddSample(s, chain,
                                    hashes.Hash(reading, s, chain, s.callchain.empty()));
                  }
                }
                if (batch.items.size() + run_size >= FoldBatch::kItems) send();
              },
              // The pages of the records in the batches are given back once they are folded.
              [&](const uint8_t* keep) { release = keep; });
          unwind_run();
          if (!batch.items.empty() || release) send();
          channel.Close();
          pages.ReturnBehind();
        } catch (const BoundedQueue<FoldBatch>::Cancelled&) {
        } catch (...) {
          reading_error = std::current_exception();
        }
        channel.Close();
      };
      try {
        reading_thread = std::thread(read_stage);
      } catch (const std::system_error&) {  // no thread to be had: one stage after all
        pipelined = false;
      }
    }
    auto stop_reading = [&] {
      if (!reading_thread.joinable()) return;
      channel.Cancel();
      pages.Done();
      reading_thread.join();
    };
    std::unique_ptr<Symbolizer> symbolizer_owner;
    std::unique_ptr<Session> session_owner;
    std::unique_ptr<RecordFold> fold_owner;
    try {
      // Kept, not destroyed, when the process ends after this (base/teardown.h).
      symbolizer_owner = NewSymbolizer(reader);
      Symbolizer& symbolizer = *symbolizer_owner;
      session_owner = std::make_unique<Session>(symbolizer);
      Session& session = *session_owner;
      session.SetInline(opt_.perf.inline_frames);
      session.ForgetExited(true);
      session.SetSrcline(opt_.perf.srcline);
      session.Prefetch(reader);
      fold_owner = std::make_unique<RecordFold>(opt_.perf, event_filter_, source.name());
      RecordFold& fold = *fold_owner;
      std::vector<uint64_t> chain_scratch;
      // A sample and its chain (recorded, or unwound by either stage).
      auto fold_sample = [&](const Sample& s, std::span<const uint64_t> chain, bool no_callchain) {
        bool fresh;
        uint32_t key = keys.Key(session, s, chain, no_callchain, &fresh);
        fold.Fold(session, s, chain, key, fresh);
      };
      if (!pipelined) {
        ReplayOrdered(reader, [&](const Record& r) {
          Sample s;
          if (r.type != kRecordSample) {
            session.OnRecord(reader, r);
          } else if (reader.ParseSample(r, &s) && select.KeepsTimeAndCpu(s) &&
                     (!select.filters_threads() ||
                      select.KeepsThread(s, session.Comm(s.pid, s.tid)))) {
            // A DWARF sample's chain is unwound here (its recorded chain is the kernel's part).
            fold_sample(s, session.Callchain(s, &chain_scratch), s.callchain.empty());
          }
        });
      } else {
        FoldBatch batch;
        // A run of samples left whole is unwound together (Session::Callchains), then folded
        // in order.
        constexpr size_t kRun = 16;
        std::vector<uint64_t> run_scratch[kRun];
        const Sample* run[kRun];
        std::span<const uint64_t> run_chains[kRun];
        for (;;) {
          bool ended;
          if (!channel.TryPop(&batch, &ended)) {
            if (ended) break;
            if (ahead.MapOne() != nullptr) continue;
            if (!channel.Pop(&batch)) break;
          }
          for (size_t i = 0; i < batch.items.size(); ++i) {
            const FoldBatch::Item& item = batch.items[i];
            if (item.raw) {
              size_t n = 0;
              for (; i + n < batch.items.size() && n < kRun && batch.items[i + n].raw; ++n) {
                run[n] = &batch.items[i + n].sample;
              }
              session.Callchains(std::span<const Sample* const>(run, n), run_scratch, run_chains);
              for (size_t k = 0; k < n; ++k) {
                fold_sample(*run[k], run_chains[k], run[k]->callchain.empty());
              }
              i += n - 1;
              continue;
            }
            Record r;
            r.type = item.type;
            r.misc = item.misc;
            std::span<const uint64_t> words(batch.words.data() + item.at, item.words);
            if (item.type != kRecordSample) {
              r.body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(words.data()),
                                                item.bytes);
              session.OnRecord(reader, r);
              continue;
            }
            if (item.not_selected) {
              session.Comm(item.sample.pid, item.sample.tid);
              continue;
            }
            Sample s = item.sample;
            // Session::Frames tells an unwound chain from the recorded one by where it is.
            s.callchain = item.unwound ? std::span<const uint64_t>() : words;
            bool fresh;
            uint32_t key = keys.Number(item.key, &fresh);
            fold.Fold(session, s, words, key, fresh);
          }
          if (batch.release) pages.Folded(batch.release);
          batch.Clear();
          std::lock_guard lock(spares_mu);
          if (spares.size() < 2) spares.push_back(std::move(batch));
        }
        pages.Done();
        reading_thread.join();
        if (reading_error) std::rethrow_exception(reading_error);
      }
    } catch (...) {
      stop_reading();
      throw;
    }
    Session& session = *session_owner;
    RecordFold& fold = *fold_owner;
    PerfScriptFolder& folder = fold.folder();
    if (event_filter_.empty()) event_filter_ = folder.event_filter();
    if (tree.size() == 1 && !tree.has_self(StackTree::kRoot)) {
      std::swap(tree, folder.tree());  // the first input: nothing to merge with
    } else {
      tree.Merge(folder.tree());
    }
    other_event_samples_ += folder.other_event_samples() + fold.filtered_hits();
    for (const std::string& e : folder.other_events()) {
      if (std::find(other_events_.begin(), other_events_.end(), e) == other_events_.end()) {
        other_events_.push_back(e);
      }
    }
    if (reader.truncated()) {
      report_->warnings.push_back(
          TruncatedWarning(source.name(), reader, fold.samples(), "folded"));
    }
    if (std::string w = SkippedRecordsWarning(source.name(), reader); !w.empty()) {
      report_->warnings.push_back(std::move(w));
    }
    report_->samples += fold.samples();
    report_->text_folds += fold.text_folds();
    if (pipelined) ++report_->two_stage_inputs;
    session.StopPrefetch();
    KeepUntilExit(std::move(fold_owner), std::move(session_owner), std::move(symbolizer_owner),
                  std::move(reading_session), std::move(reading_symbolizer));
  }

  std::unique_ptr<Symbolizer> NewSymbolizer(const PerfDataReader& reader) {
    auto symbolizer = std::make_unique<Symbolizer>(opt_.symbols);
    symbolizer->SetEmbedded(&reader.embedded_symbols());
    symbolizer->SetKernelBuildId(KernelBuildId(reader));
    return symbolizer;
  }

  void AddPerfScript(ByteSource& source) {
    StackTree& tree = Tree(1, source.name());
    BlockReader blocks(source, BlockReader::kSampleBoundary);
    std::vector<std::unique_ptr<PerfScriptFolder>> folders;
    Block block;
    if (!blocks.Next(&block)) {
      NoteOverlong(blocks, source.name());
      return;
    }
    if (event_filter_.empty()) FindFirstEvent(block.data, &event_filter_);
    Block next;
    bool more = blocks.Next(&next);
    if (threads_ <= 1 || !more) {
      folders.push_back(std::make_unique<PerfScriptFolder>(opt_.perf, event_filter_));
      PerfScriptFolder& f = *folders.back();
      f.AddBlock(block.data, block.first_line, source.name());
      if (block.releasable) ReleaseInput(block.data);
      while (more) {
        f.AddBlock(next.data, next.first_line, source.name());
        if (next.releasable) ReleaseInput(next.data);
        more = blocks.Next(&next);
      }
    } else {
      BlockQueue queue(threads_ * 2);
      std::vector<std::thread> workers;
      std::vector<std::exception_ptr> errors(threads_);
      for (unsigned i = 0; i < threads_; ++i) {
        folders.push_back(std::make_unique<PerfScriptFolder>(opt_.perf, event_filter_));
      }
      for (unsigned i = 0; i < threads_; ++i) {
        workers.emplace_back([&, i] {
          NameThisThread("pf-fold");
          try {
            std::pair<Block, std::string> item;
            while (queue.Pop(&item)) {
              const Block& b = item.first;
              folders[i]->SetEventFilter(item.second);
              folders[i]->AddBlock(b.data, b.first_line, source.name());
              if (b.releasable) ReleaseInput(b.data);
            }
          } catch (...) {
            errors[i] = std::current_exception();
            queue.Cancel();  // the error ends the fold: the reader need not go on
          }
        });
      }
      try {
        more = queue.Push({std::move(block), event_filter_}) && more;
        while (more) {
          // Until an event type is known, look ahead so every worker filters alike.
          if (event_filter_.empty()) FindFirstEvent(next.data, &event_filter_);
          if (!queue.Push({std::move(next), event_filter_})) break;
          more = blocks.Next(&next);
        }
      } catch (...) {
        queue.Close();
        for (auto& w : workers) w.join();
        throw;
      }
      queue.Close();
      for (auto& w : workers) w.join();
      for (auto& e : errors) {
        if (e) std::rethrow_exception(e);
      }
    }
    NoteOverlong(blocks, source.name());

    SkipCount skipped;
    uint64_t samples = 0, others = 0;
    for (auto& f : folders) {
      f->tree().set_unit(f->Unit());
      tree.Merge(f->tree());
      skipped.Merge(f->skipped_lines());
      samples += f->samples();
      others += f->other_event_samples();
      other_event_samples_ += f->other_event_samples();
      for (const std::string& e : f->other_events()) {
        if (std::find(other_events_.begin(), other_events_.end(), e) == other_events_.end()) {
          other_events_.push_back(e);
        }
      }
      if (event_filter_.empty()) event_filter_ = f->event_filter();
    }
    std::sort(other_events_.begin(), other_events_.end());
    if (skipped.count) report_->warnings.push_back(SkippedMessage(skipped, ""));
    report_->skipped_lines += skipped.count;
    if (samples == 0 && others == 0 && skipped.count) {
      throw Error(Where(source.name(), skipped.first_line),
                  "nothing in the input parsed as `perf script` text (" +
                      Plural(skipped.count, "line", "lines") + " not understood); pf reads " +
                      kFormatsPfReads);
    }
    report_->samples += samples;
  }

  // A text input cannot be selected from: its samples do not carry what the selection reads.
  void RefuseSelection(const ByteSource& source, const char* what) const {
    if (select_.empty()) return;
    throw UsageError(source.name() + ": is " + what + "; --comms, --pids, --tids, --cpu " +
                     "and --time select samples of recordings (perf.data, pf-record " +
                     "streams): give them to perf script or pf-script instead");
  }

  const CollapseOptions& opt_;
  CollapseReport* report_;
  StackFilter filter_;
  SampleSelection select_;
  unsigned threads_;
  std::string event_filter_;
  std::optional<StackTree> tree_;
  uint64_t other_event_samples_ = 0;
  std::vector<std::string> other_events_;
};

}  // namespace

void NoteEmptyResult(const StackTree& read, CollapseReport* report) {
  report->empty = true;
  report->stacks_read = report->weight_read = report->deepest_read = 0;
  std::vector<uint32_t> depth(read.size(), 0);
  for (NodeId n = 1; n < read.size(); ++n) {
    depth[n] = depth[read.parent(n)] + 1;
    if (!read.has_self(n)) continue;
    ++report->stacks_read;
    report->deepest_read = std::max(report->deepest_read, depth[n]);
    for (int c = 0; c < read.columns(); ++c) {
      uint64_t w = read.self(n, c);
      report->weight_read = report->weight_read + w < w ? UINT64_MAX : report->weight_read + w;
    }
  }
}

std::string EmptyResultReason(const CollapseReport& r, std::string_view dropped_by) {
  const bool one = r.inputs <= 1;
  if (r.inputs > 0 && r.empty_inputs == r.inputs) {
    return one ? "the input is empty" : "the inputs are empty";
  }
  if (r.samples == 0 && r.folded_lines == 0) {
    if (r.other_event_samples) {
      return "no samples of " + r.event + " (the input's " +
             Plural(r.other_event_samples, "sample is", "samples are") +
             " of other events; choose with --event-filter)";
    }
    if (r.recordings && !r.skipped_lines) {
      return std::string(r.recordings == 1 ? "the recording holds" : "the recordings hold") +
             " no samples (was the target idle, or the recording too short?)";
    }
    return "no stack counts found in the input (is it folded stacks?)";
  }
  const std::string read = Plural(r.stacks_read, "stack", "distinct stacks") + " read" +
                           (r.samples ? " from " + Plural(r.samples, "sample", "samples") : "");
  if (r.weight_read == 0) {  // (a stack with a count of 0 makes no node)
    if (r.samples) {
      return r.samples == 1 ? "the one sample read weighs 0"
                            : "the " + Plural(r.samples, "sample", "samples") + " read all weigh 0";
    }
    return r.folded_lines == 1
               ? "the one stack read has a count of 0"
               : "the " + Plural(r.folded_lines, "stack", "stacks") + " read all have a count of 0";
  }
  std::string by;
  if (!dropped_by.empty()) {
    by = std::string(dropped_by);
  } else {
    for (const std::string& f : r.filters) by += (by.empty() ? "" : "/") + f;
    by = by.empty() ? std::string("the filters") : by;
  }
  std::string why = by + " left none of the " + read;
  // Samples without call chains fold to `comm;leaf`: a filter on callers cannot match.
  if (r.samples && r.deepest_read <= 2) {
    why += "; their stacks hold only the sampled function: record call graphs "
           "(perf record -g) to select by callers";
  }
  return why;
}

StackTree CollapseFilesToTree(const std::vector<std::string>& inputs,
                              const CollapseOptions& options, CollapseReport* report) {
  Collapser c(options, report);
  std::vector<std::string> paths = inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  for (const std::string& p : paths) {
    std::unique_ptr<ByteSource> src = OpenInput(p);
    c.Add(*src);
  }
  return c.TakeTree();
}

void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, CollapseReport* report) {
  StackTree tree = CollapseFilesToTree(inputs, options, report);
  if (tree.saturated()) report->warnings.push_back(SaturationWarning(tree.saturated()));
  BufferedWriter w(out);
  WriteFolded(tree, w);
  w.Flush();
  out.Commit();
}

void CollapseSources(std::vector<std::unique_ptr<ByteSource>> sources,
                     const CollapseOptions& options, ByteSink& out, CollapseReport* report) {
  Collapser c(options, report);
  for (auto& s : sources) c.Add(*s);
  StackTree tree = c.TakeTree();
  if (tree.saturated()) report->warnings.push_back(SaturationWarning(tree.saturated()));
  BufferedWriter w(out);
  WriteFolded(tree, w);
  w.Flush();
  out.Commit();
}

}  // namespace pf
