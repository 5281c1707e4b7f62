// Folding one recording: on one thread, or in two stages on two.
//
// A recording's result equals folding pf-script's text of it, because that is how each
// distinct sample is folded (record_fold.cpp). On one thread, the records are replayed in
// time order (perf's ordered events) into a Session that follows the maps and comms, and
// each sample the selection keeps is unwound where it carries a stack copy, keyed and folded.
//
// A perf.data file whose samples carry stack copies is folded in two stages on two threads
// when there are two (a frame-pointer recording's reading stage would only parse: the split
// costs more CPU than it saves time; CollapseOptions::two_stage_fp_bytes): one reads the
// records in time order, the other keys, names and folds the samples (SampleKeys,
// RecordFold). The two share the unwinding of stack copies as their loads allow: the reading
// thread unwinds a batch itself while the folding thread has batches waiting, and leaves it
// to that thread otherwise. Each stage replays the maps and comms in its own Session, in the
// same order; the first hands the second, in batches, the records that change them and each
// sample: its scalars and chain, or where it is in the mapped file. Either stage unwinds
// stacks a run at a time (SampleRun). While it waits for a batch, the folding thread maps the
// pages ahead of the reading one (io/page_ahead.h), and the pages of what was folded are given
// back to the kernel behind both (PageReturn). A pipe's stream may announce events and
// build-ids as it goes, which both stages would read: it is folded on one.

#include "collapse/recording.h"

#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/bounded_queue.h"
#include "base/cpu.h"
#include "base/error.h"
#include "base/teardown.h"
#include "base/thread_name.h"
#include "collapse/test_seams.h"
#include "io/page_ahead.h"
#include "pfstream/sample_layout.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "symbolize/symbolizer.h"

namespace pf {

namespace {

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

// Samples whose stack copies are unwound together: up to kSize wait, then are unwound
// (Session::Callchains: several stacks in turn wait on memory less than one at a time) and
// handed on in order. Both stages unwind so.
class SampleRun {
 public:
  static constexpr size_t kSize = 16;

  size_t size() const { return size_; }
  bool full() const { return size_ == kSize; }
  /// Adds a sample that stays where it is until Unwind.
  void Add(const Sample* s) { samples_[size_++] = s; }
  /// Adds a copy of `s` (its spans still into the mapped file).
  void AddCopy(const Sample& s) {
    copies_[size_] = s;
    Add(&copies_[size_]);
  }
  /// Unwinds the samples waiting, with `session`'s maps, and hands each in order with its
  /// chain to `each`; the run is empty then.
  template <typename Each>
  void Unwind(Session& session, Each&& each) {
    if (size_ == 0) return;
    session.Callchains(std::span<const Sample* const>(samples_, size_), scratch_, chains_);
    for (size_t k = 0; k < size_; ++k) each(*samples_[k], chains_[k]);
    size_ = 0;
  }

 private:
  Sample copies_[kSize];
  const Sample* samples_[kSize];
  std::vector<uint64_t> scratch_[kSize];
  std::span<const uint64_t> chains_[kSize];
  size_t size_ = 0;
};

// What the two stages share: the batches, from the reading thread to the folding one, which
// hands the batches it is done with back (their memory stays mapped for the next); and the
// mapped file's pages. (On cache lines of its own: the reading thread writes where it is in
// the file at every record, and the folding thread's state is to stay out of those lines.)
struct alignas(64) Handover {
  explicit Handover(PerfDataReader& reader) : pages(reader), ahead(reader.mapped()) {}

  BoundedQueue<FoldBatch> channel{8};
  std::mutex spares_mu;
  std::vector<FoldBatch> spares;
  PageReturn pages;
  // The folding thread maps the pages ahead of the reading one while it waits (the reading
  // thread is the longer stage; io/page_ahead.h).
  PageAhead ahead;
};

// The first of two stages: reads the records in time order into its own Session, selects the
// samples, and hands the folding stage batches of the records that change a Session and of
// the samples, unwound here or left whole to the folding stage as their loads allow.
class ReadingStage {
 public:
  ReadingStage(PerfDataReader& reader, const SampleSelection& select, Session& session,
               Handover& handover, bool by_cpu)
      : reader_(reader), select_(select), session_(session), handover_(handover),
        hashes_(by_cpu) {}

  /// Reads every record and hands it on; then gives pages back behind the folding stage
  /// until it is done. Throws BoundedQueue<FoldBatch>::Cancelled when it gave up.
  void Run() {
    ReplayOrdered(
        reader_, [&](const Record& r) { OnRecord(r); },
        // The pages of the records in the batches are given back once they are folded.
        [&](const uint8_t* keep) { release_ = keep; });
    UnwindRun();
    if (!batch_.items.empty() || release_) Send();
    handover_.channel.Close();
    handover_.pages.ReturnBehind();
  }

 private:
  void OnRecord(const Record& r) {
    handover_.ahead.ReaderAt(r.body.data());
    if (batch_.items.empty() && run_.size() == 0) {
      // The folding thread is busy starting (its first batches) or has batches waiting:
      // unwound here. Else it is about to wait: left to it. (Tests force either thread:
      // collapse/test_seams.h.)
      const auto forced = test_seams::two_stage_unwinder.load();
      unwind_here_ = forced == test_seams::TwoStageUnwinder::kByLoad
                         ? sent_ < 4 || handover_.channel.size() >= 2
                         : forced == test_seams::TwoStageUnwinder::kReadingThread;
    }
    bool added = r.type == kRecordSample ? AddSample(r) : AddRecord(r);
    if (added && batch_.items.size() + run_.size() >= FoldBatch::kItems) Send();
  }

  // A record other than a sample: replayed here, and handed on when it changes a Session.
  bool AddRecord(const Record& r) {
    UnwindRun();  // with the maps before this record
    session_.OnRecord(reader_, r);
    // The records that change a Session's maps, comms and build-ids (Session::OnRecord).
    if (r.type != kRecordComm && r.type != kRecordFork && r.type != kRecordExit &&
        r.type != kRecordMmap && r.type != kRecordMmap2 && r.type != kRecordHeaderBuildId) {
      return false;
    }
    batch_.AddRecord(r);
    return true;
  }

  // A sample: left out, handed on whole, or unwound here (now, or with the samples after it).
  bool AddSample(const Record& r) {
    alignas(64) Sample s;  // (on cache lines of its own: ParseSample clears it whole)
    if (!reader_.ParseSample(r, &s)) return false;
    // The selection, as perf tests it: time and CPU before the thread.
    if (!select_.KeepsTimeAndCpu(s)) return false;
    if (select_.filters_threads() && !select_.KeepsThread(s, session_.Comm(s.pid, s.tid))) {
      batch_.AddNotSelected(s);
    } else if (!unwind_here_ && r.stable) {
      UnwindRun();
      // Asking a thread's comm names a thread never named ":TID", which changes what a later
      // COMM or FORK does (as in perf): both Sessions ask for every sample the folding
      // thread will fold.
      session_.Comm(s.pid, s.tid);
      batch_.AddWhole(s);
    } else if (r.stable) {
      // A DWARF sample's chain is unwound here (its recorded chain is the kernel's part),
      // with the samples after it.
      run_.AddCopy(s);
      if (run_.full()) UnwindRun();
    } else {  // its bytes go with the next record: unwound now
      UnwindRun();
      std::span<const uint64_t> chain = session_.Callchain(s, &chain_scratch_);
      batch_.AddSample(s, chain, hashes_.Hash(session_, s, chain, s.callchain.empty()));
    }
    return true;
  }

  // The samples waiting in the run, unwound into the batch.
  void UnwindRun() {
    run_.Unwind(session_, [&](const Sample& s, std::span<const uint64_t> chain) {
      batch_.AddSample(s, chain, hashes_.Hash(session_, s, chain, s.callchain.empty()));
    });
  }

  void Send() {
    UnwindRun();
    ++sent_;
    batch_.release = release_;
    if (!handover_.channel.Push(std::move(batch_))) throw BoundedQueue<FoldBatch>::Cancelled();
    batch_ = FoldBatch();
    std::lock_guard lock(handover_.spares_mu);
    if (!handover_.spares.empty()) {
      batch_ = std::move(handover_.spares.back());
      handover_.spares.pop_back();
    }
  }

  PerfDataReader& reader_;
  const SampleSelection& select_;
  Session& session_;
  Handover& handover_;
  std::vector<uint64_t> chain_scratch_;
  SampleKeys hashes_;  // Hash only
  FoldBatch batch_;
  const uint8_t* release_ = nullptr;
  bool unwind_here_ = false;  // for the batch being filled
  size_t sent_ = 0;
  // Samples to unwind here wait in a run, to be unwound together, until a record that is not
  // such a sample comes.
  SampleRun run_;
};

// Whether some event of the recording copies user stacks into its samples (to be unwound).
bool CarriesStackCopies(const PerfDataReader& reader) {
  for (const EventAttr& attr : reader.attrs()) {
    if (attr.sample_type & sample_layout::kStackUser) return true;
  }
  return false;
}

// One recording's fold: the reader, the Sessions, and (in two stages) the reading thread.
class RecordingFolder {
 public:
  RecordingFolder(ByteSource& source, const CollapseOptions& options, SampleSelection select,
                  unsigned threads)
      : opt_(options), name_(source.name()), reader_(source), select_(std::move(select)),
        keys_(options.perf.include_cpu), handover_(reader_) {
    select_.Bind(reader_);  // (--time's percentages are of this recording)
    if (opt_.perf.include_cpu) RequireSampleCpus(reader_, "--per-cpu");
    // Two stages on two threads for a file big enough to gain from them (starting the
    // second Session and thread costs about a millisecond), by what its samples carry.
    const uint64_t two_stage_bytes =
        CarriesStackCopies(reader_) ? opt_.two_stage_bytes : opt_.two_stage_fp_bytes;
    two_stage_ =
        threads >= 2 && !reader_.pipe_mode() && reader_.data_size() >= two_stage_bytes;
  }

  void Run(const std::string& event_filter, const RecordingFolded& done) {
    // The reading thread starts first: it is the one with work to do at once.
    if (two_stage_) StartReading();
    try {
      StartFolding(event_filter);
      if (two_stage_) {
        FoldBatches();
      } else {
        FoldInOneStage();
      }
    } catch (...) {
      StopReading();
      throw;
    }
    done(*fold_, reader_, two_stage_);
    session_->StopPrefetch();
    KeepUntilExit(std::move(fold_), std::move(session_), std::move(symbolizer_),
                  std::move(reading_session_), std::move(reading_symbolizer_));
  }

 private:
  std::unique_ptr<Symbolizer> NewSymbolizer() const {
    auto symbolizer = std::make_unique<Symbolizer>(opt_.symbols);
    symbolizer->SetEmbedded(&reader_.embedded_symbols());
    symbolizer->SetKernelBuildId(KernelBuildId(reader_));
    return symbolizer;
  }

  void StartReading() {
    reading_symbolizer_ = NewSymbolizer();
    reading_session_ = std::make_unique<Session>(*reading_symbolizer_);
    reading_session_->ForgetExited(true);
    const int folding_cpu = CurrentCpu();
    try {
      reading_thread_ = std::thread([this, folding_cpu] { Read(folding_cpu); });
    } catch (const std::system_error&) {  // no thread to be had: one stage after all
      two_stage_ = false;
    }
  }

  // The reading thread.
  void Read(int folding_cpu) {
    try {
      NameThisThread("pf-read");
      // Both stages are busy from the start: each on a CPU of its own (base/cpu.h).
      LeaveCpu(folding_cpu);
      ReadingStage(reader_, select_, *reading_session_, handover_, opt_.perf.include_cpu).Run();
    } catch (const BoundedQueue<FoldBatch>::Cancelled&) {
    } catch (...) {
      reading_error_ = std::current_exception();
    }
    handover_.channel.Close();
  }

  // The folding stage gave up: so does the reading one.
  void StopReading() {
    if (!reading_thread_.joinable()) return;
    handover_.channel.Cancel();
    handover_.pages.Done();
    reading_thread_.join();
  }

  void StartFolding(const std::string& event_filter) {
    // Kept, not destroyed, when the process ends after this (base/teardown.h).
    symbolizer_ = NewSymbolizer();
    session_ = std::make_unique<Session>(*symbolizer_);
    session_->SetInline(opt_.perf.inline_frames);
    session_->ForgetExited(true);
    session_->SetSrcline(opt_.perf.srcline);
    session_->Prefetch(reader_);
    fold_ = std::make_unique<RecordFold>(opt_.perf, event_filter, name_);
    fold_->set_pipe(reader_.pipe_mode());
  }

  // A sample and its chain (recorded, or unwound by either stage).
  void FoldSample(const Sample& s, std::span<const uint64_t> chain, bool no_callchain) {
    bool fresh;
    KeyFold& key = keys_.Find(*session_, s, chain, no_callchain, &fresh);
    fold_->Fold(*session_, s, chain, key, fresh);
  }

  void FoldInOneStage() {
    Session& session = *session_;
    // The keys' table is big and each sample looks up a key seldom seen: a sample from the
    // mapped file is hashed as it comes, its slot asked for, and folded when the next record
    // comes (or its pages are to be given back), by which time the slot is in the cache.
    // (Its hash is of the Session as it comes, which no record changes before it is folded.)
    std::vector<uint64_t> chain_scratch[2];
    alignas(64) Sample pending;
    std::span<const uint64_t> pending_chain;
    XXH128_hash_t pending_key{};
    bool has_pending = false;
    auto fold_pending = [&] {
      if (!has_pending) return;
      has_pending = false;
      bool fresh;
      KeyFold& key = keys_.Find(pending_key, &fresh);
      fold_->Fold(session, pending, pending_chain, key, fresh);
    };
    ReplayOrdered(
        reader_,
        [&](const Record& r) {
          alignas(64) Sample s;  // (on cache lines of its own: ParseSample clears it whole)
          if (r.type != kRecordSample) {
            fold_pending();
            session.OnRecord(reader_, r);
          } else if (reader_.ParseSample(r, &s) && select_.KeepsTimeAndCpu(s) &&
                     (!select_.filters_threads() ||
                      select_.KeepsThread(s, session.Comm(s.pid, s.tid)))) {
            // A DWARF sample's chain is unwound here (its recorded chain is the kernel's part),
            // into the scratch the pending sample's does not use.
            std::vector<uint64_t>& scratch =
                chain_scratch[has_pending && pending_chain.data() == chain_scratch[0].data()];
            std::span<const uint64_t> chain = session.Callchain(s, &scratch);
            const bool no_callchain = s.callchain.empty();
            if (!r.stable) {  // its bytes go with the next record: folded now
              fold_pending();
              FoldSample(s, chain, no_callchain);
              return;
            }
            XXH128_hash_t key = keys_.Hash(session, s, chain, no_callchain);
            keys_.Prefetch(key);
            fold_pending();
            pending = s;
            pending_chain = chain;
            pending_key = key;
            has_pending = true;
          }
        },
        [&](const uint8_t* keep) {
          fold_pending();
          reader_.ReleaseBefore(keep);
        });
    fold_pending();
  }

  // The folding stage: folds the batches as they come (mapping pages ahead of the reading
  // stage while none is there) and hands each back.
  void FoldBatches() {
    FoldBatch batch;
    SampleRun run;
    for (;;) {
      bool ended;
      if (!handover_.channel.TryPop(&batch, &ended)) {
        if (ended) break;
        if (handover_.ahead.MapOne() != nullptr) continue;
        if (!handover_.channel.Pop(&batch)) break;
      }
      Fold(batch, run);
      if (batch.release) handover_.pages.Folded(batch.release);
      batch.Clear();
      std::lock_guard lock(handover_.spares_mu);
      if (handover_.spares.size() < 2) handover_.spares.push_back(std::move(batch));
    }
    handover_.pages.Done();
    reading_thread_.join();
    if (reading_error_) std::rethrow_exception(reading_error_);
  }

  // One batch, in order: records replayed, samples folded.
  void Fold(const FoldBatch& batch, SampleRun& run) {
    Session& session = *session_;
    // The keys' table is big and each sample looks up a key seldom seen: the lookups of the
    // samples a few items on are asked for ahead.
    constexpr size_t kAhead = 8;
    auto prefetch = [&](size_t i) {
      if (i < batch.items.size() && batch.items[i].type == kRecordSample && !batch.items[i].raw &&
          !batch.items[i].not_selected) {
        keys_.Prefetch(batch.items[i].key);
      }
    };
    for (size_t i = 0; i < kAhead; ++i) prefetch(i);
    for (size_t i = 0; i < batch.items.size(); ++i) {
      prefetch(i + kAhead);
      const FoldBatch::Item& item = batch.items[i];
      if (item.raw) {
        // A run of samples left whole is unwound together, then folded in order.
        size_t n = 0;
        for (; i + n < batch.items.size() && !run.full() && batch.items[i + n].raw; ++n) {
          run.Add(&batch.items[i + n].sample);
        }
        run.Unwind(session, [&](const Sample& s, std::span<const uint64_t> chain) {
          FoldSample(s, chain, s.callchain.empty());
        });
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
        session.OnRecord(reader_, r);
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
      KeyFold& key = keys_.Find(item.key, &fresh);
      fold_->Fold(session, s, words, key, fresh);
    }
  }

  const CollapseOptions& opt_;
  const std::string name_;
  PerfDataReader reader_;
  SampleSelection select_;
  alignas(64) SampleKeys keys_;  // (off the lines of what the reading thread reads)
  bool two_stage_ = false;
  std::unique_ptr<Symbolizer> reading_symbolizer_;
  std::unique_ptr<Session> reading_session_;
  std::exception_ptr reading_error_;
  std::thread reading_thread_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<RecordFold> fold_;
  Handover handover_;  // last: the folding thread's members stay off its lines
};

}  // namespace

void FoldRecording(ByteSource& source, const CollapseOptions& options, SampleSelection select,
                   unsigned threads, const std::string& event_filter,
                   const RecordingFolded& done) {
  RecordingFolder folder(source, options, std::move(select), threads);
  folder.Run(event_filter, done);
}

}  // namespace pf
