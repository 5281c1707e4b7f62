// Collapsing inputs of any format into one stack tree.
//
// Each input is sniffed (formats/sniff.h) and read by the reader of its format: folded
// stacks are merged line by line (FoldedReader); perf script's text is cut into blocks that
// end at a sample boundary, folded on as many threads as the machine gives, each into a tree
// of its own (PerfScriptFolder), and the trees merged; a recording is folded as its perf
// script text would be (recording.cpp). Inputs of every kind merge into one tree, as long as
// they have as many counts per line (a differential profile has two). The filters (--include,
// --exclude, --hide) run once on the merged tree, and an empty result is explained
// (stacks/read_report.cpp). The first event type seen is the one folded unless --event-filter names
// one; the samples of the others are counted and said at the end.

#include "collapse/collapse.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "base/bounded_queue.h"
#include "base/diagnostics.h"
#include "base/error.h"
#include "base/thread_name.h"
#include "collapse/recording.h"
#include "formats/sniff.h"
#include "io/line_reader.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

namespace pf {

namespace {

std::string SkippedMessage(const SkipCount& s, const char* what) {
  return Plural(s.count, "line", "lines") + " skipped" + what + ", first at " +
         Where(s.first_file, s.first_line);
}

using BlockQueue = BoundedQueue<std::pair<Block, std::string>>;

}  // namespace

class Collapser::Impl {
 public:
  // Compiles the filters first, so a bad pattern fails before any input is read.
  Impl(const CollapseOptions& options, ReadReport* report)
      : opt_(options), report_(report), filter_(options.filter), select_(options.select) {
    threads_ = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    event_filter_ = options.perf.event_filter;
    report_->selection = options.select.Names();
  }

  void Add(ByteSource& source) {
    std::string_view head = source.Peek();
    std::string foreign;
    InputFormat format = SniffFormat(head, &foreign);
    ++report_->inputs;
    format = Forced(format, foreign, source.name());
    if (opt_.perf.keep_times && format != InputFormat::kPerfData && format != InputFormat::kEmpty) {
      throw UsageError(source.name() + ": --time-order reads recordings (perf.data, pf-record "
                       "streams), whose samples have times");
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
                    std::string("binary data, not a format pf reads; pf reads ") + FormatsPfReads());
      case InputFormat::kForeign:
        throw Error(source.name(), "this looks like " + foreign +
                                       ", which pf does not read; pf reads " + FormatsPfReads());
      case InputFormat::kFolded:
        RefuseSelection(source, "folded stacks");
        AddFolded(source);
        return;
      case InputFormat::kPerfScript:
        RefuseSelection(source, "`perf script` text");
        AddPerfScript(source);
        return;
      default:  // another profiler's format
        RefuseSelection(source, FormatName(format));
        AddProfile(format, source);
        return;
    }
  }

  /// The format an input sniffed as `sniffed` is read as, with -f (opt_.format): perf script
  /// or folded reads any text as that (warning when it looks like something else), a
  /// recording stays one, -f perf-data takes only recordings, another profiler's format is
  /// read as that (its reader says if it is not).
  InputFormat Forced(InputFormat sniffed, const std::string& foreign, const std::string& name) {
    const InputFormat forced = FormatFromName(opt_.format);
    if (forced == InputFormat::kEmpty || sniffed == InputFormat::kEmpty) return sniffed;
    const bool text = sniffed != InputFormat::kPerfData && sniffed != InputFormat::kBinary &&
                      sniffed != InputFormat::kPprof && sniffed != InputFormat::kGperftoolsCpu;
    if (forced == InputFormat::kPerfScript || forced == InputFormat::kFolded) {
      if (forced == InputFormat::kFolded && sniffed == InputFormat::kPerfData) {
        throw Error(name, "a perf.data recording, not folded stacks (drop -f folded)");
      }
      if (!text) return sniffed;
      if (sniffed != InputFormat::kPerfScript && sniffed != InputFormat::kFolded) {
        report_->warnings.push_back(name + ": this looks like " +
                                    (sniffed == InputFormat::kForeign ? foreign
                                                                      : FormatName(sniffed)) +
                                    ", read as " + opt_.format + " because -f says so");
      }
      return forced;
    }
    if (forced == InputFormat::kPerfData && sniffed != InputFormat::kPerfData) {
      throw Error(name, "not a perf.data recording or pf-record stream (-f perf-data)");
    }
    return forced;
  }

  /// The folded result, filtered; notices added to the report.
  // --time-order: the recording's tree unfiltered, and its samples in order.
  StackTree TakeTimeline(std::vector<TimedSample>* samples) {
    NoteEvents();
    if (!tree_) tree_.emplace();
    *samples = std::move(timed_);
    return std::move(*tree_);
  }

  StackTree TakeTree() {
    NoteEvents();
    if (!tree_) tree_.emplace();
    if (!opt_.value.empty() && !tree_->differential()) *tree_ = OneValue(*tree_, opt_.value);
    for (const auto* f : {&opt_.filter.include, &opt_.filter.exclude, &opt_.filter.hide}) {
      if (!f->empty()) {
        report_->filters.push_back(f == &opt_.filter.include   ? "--include"
                                   : f == &opt_.filter.exclude ? "--exclude"
                                                               : "--hide");
      }
    }
    StackTree out = opt_.filter.empty() ? std::move(*tree_) : filter_.Apply(*tree_);
    bool empty = true;
    for (int c = 0; c < out.columns() && empty; ++c) empty = out.Total(c) == 0;
    if (empty) NoteEmptyResult(opt_.filter.empty() ? out : *tree_, report_);
    return out;
  }

  // Collapser::AddPerfScriptToList: AddPerfScript's fold on one thread, into `list`.
  WeightUnit AddPerfScriptToList(ByteSource& source, StackList* list) {
    ++report_->inputs;
    BlockReader blocks(source, BlockReader::kSampleBoundary);
    std::vector<std::unique_ptr<PerfScriptFolder>> folders;
    Block block;
    while (blocks.Next(&block)) {
      if (folders.empty()) {
        if (event_filter_.empty()) FindFirstEvent(block.data, &event_filter_);
        folders.push_back(std::make_unique<PerfScriptFolder>(opt_.perf, event_filter_, list));
      }
      blocks.CountedLines(block, folders[0]->AddBlock(block.data, block.first_line, source.name()));
      if (block.releasable) ReleaseInput(block.data);
    }
    NoteOverlong(blocks, source.name());
    const WeightUnit unit = NoteFolders(folders, source.name());
    NoteEvents();
    return unit;
  }

 private:
  // The tree every input merges into: differential (folded text with two counts per line)
  // or one value per stack, alike for every input.
  StackTree& Tree(bool differential, const std::string& name) {
    if (!tree_) tree_.emplace(differential ? StackTree::Differential() : StackTree());
    if (tree_->differential() != differential) {
      throw Error(name, differential
                            ? "has two counts per line (a differential profile) and cannot be "
                              "merged with one-count profiles"
                            : "has one count per line and cannot be merged with differential "
                              "(two-count) profiles");
    }
    return *tree_;
  }

  // What input `name` weighs, said once when it is not what an input before it weighed
  // (their sum is then of no one unit: the tree's becomes unspecified, CombineUnits).
  void NoteInputUnit(WeightUnit unit, const std::string& name) {
    if (unit == WeightUnit::kUnspecified) return;
    if (first_unit_ == WeightUnit::kUnspecified) {
      first_unit_ = unit;
      first_unit_input_ = name;
    } else if (unit != first_unit_ && !units_warned_) {
      units_warned_ = true;
      report_->warnings.push_back("the inputs weigh different things (" + first_unit_input_ +
                                  ": " + std::string(UnitName(first_unit_)) + ", " + name +
                                  ": " + std::string(UnitName(unit)) +
                                  "): their sum is of numbers, not of like for like");
    }
  }

  void NoteOverlong(const BlockReader& reader, const std::string& name) {
    if (reader.overlong_lines()) report_->warnings.push_back(OverlongWarning(OverlongLines(reader, name)));
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
    StackTree& tree = Tree(columns == 2, source.name());
    const bool was_empty = tree.size() == 1 && !tree.has_self(StackTree::kRoot);
    // --skip-after cuts folded stacks as it cuts perf script's: read apart, cut, merge.
    std::optional<StackTree> uncut;
    if (!opt_.perf.skip_after.empty()) uncut.emplace(TreeForFolded(columns));
    FoldedReader reader(uncut ? *uncut : tree);
    BlockReader blocks(source, BlockReader::kLineBoundary);
    Block block;
    while (blocks.Next(&block)) {
      reader.AddBlock(block.data, block.first_line, source.name());
      if (block.releasable) ReleaseInput(block.data);
    }
    NoteOverlong(blocks, source.name());
    // The unit its `# pf-unit:` line names (the folded reader does not set it: the tree may
    // hold the inputs before this one).
    const WeightUnit unit = reader.unit().unit();
    if (!reader.unit().warning().empty()) report_->warnings.push_back(reader.unit().warning());
    NoteInputUnit(unit, source.name());
    if (uncut) {
      uncut->set_unit(unit);
    } else {
      tree.set_unit(was_empty ? unit : CombineUnits(tree.unit(), unit));
    }
    if (reader.stacks_read() == 0 && reader.malformed().count) {  // (read as folded by -f)
      throw Error(Where(source.name(), reader.malformed().first_line),
                  "nothing in the input parsed as folded stacks (" +
                      Plural(reader.malformed().count, "line", "lines") +
                      " not `stack count`); pf reads " + FormatsPfReads());
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

  // Another profiler's profile: read into a tree of its own (collapse/profiles.h), merged.
  void AddProfile(InputFormat format, ByteSource& source) {
    ProfileOptions profile = opt_.profile;
    profile.perf = &opt_.perf;
    StackTree read = ReadProfile(format, source, profile, opt_.symbols, report_);
    NoteInputUnit(read.unit(), source.name());
    if (!tree_ || (tree_->size() == 1 && !tree_->has_self(StackTree::kRoot) &&
                   tree_->columns() == 1 && !tree_->differential())) {
      tree_.emplace(std::move(read));
      return;
    }
    if (tree_->columns() != read.columns() || tree_->differential() != read.differential()) {
      throw Error(source.name(), "holds " + std::to_string(read.columns()) +
                                     " values per stack, the inputs before it " +
                                     std::to_string(tree_->columns()) +
                                     ": profiles of different sample types cannot be merged");
    }
    tree_->Merge(read);
  }

  // A recording (pf-record stream or perf.data): folded as pf-script's text of it would be
  // (record_fold.cpp), in one or two stages (recording.cpp), then merged.
  void AddPerfData(ByteSource& source) {
    StackTree& tree = Tree(false, source.name());
    if (opt_.perf.keep_times && !(tree.size() == 1 && !tree.has_self(StackTree::kRoot))) {
      throw UsageError("--time-order folds one recording: give one input");
    }
    FoldRecording(source, opt_, select_, threads_, event_filter_,
                  [&](RecordFold& fold, const PerfDataReader& reader, bool two_stage) {
      PerfScriptFolder& folder = fold.folder();
      if (event_filter_.empty()) event_filter_ = folder.event_filter();
      NoteInputUnit(folder.tree().unit(), source.name());
      if (tree.size() == 1 && !tree.has_self(StackTree::kRoot)) {
        std::swap(tree, folder.tree());  // the first input: nothing to merge with
      } else {
        tree.Merge(folder.tree());
      }
      other_event_samples_ += folder.other_event_samples() + fold.filtered_hits();
      NoteOtherEvents(folder.other_events());
      if (opt_.perf.keep_times) timed_ = fold.TakeTimed();
      if (reader.truncated()) {
        report_->warnings.push_back(
            TruncatedWarning(source.name(), reader, fold.samples(), "folded"));
      }
      if (std::string w = SkippedRecordsWarning(source.name(), reader); !w.empty()) {
        report_->warnings.push_back(std::move(w));
      }
      report_->samples += fold.samples();
      report_->perf_samples += fold.samples();
      report_->named_folds += fold.named_folds();
      if (two_stage) ++report_->two_stage_inputs;
    });
  }

  void AddPerfScript(ByteSource& source) {
    StackTree& tree = Tree(false, source.name());
    BlockReader blocks(source, BlockReader::kSampleBoundary);
    std::vector<std::unique_ptr<PerfScriptFolder>> folders;
    Block block;
    if (!blocks.Next(&block)) {
      NoteOverlong(blocks, source.name());
      return;
    }
    if (event_filter_.empty()) FindFirstEvent(block.data, &event_filter_);
    // The first blocks are folded on this thread: all of them with one thread, else those of
    // the first one_thread_text_bytes (CollapseOptions); the rest by the workers, the first
    // of which goes on with this folder.
    folders.push_back(std::make_unique<PerfScriptFolder>(opt_.perf, event_filter_));
    PerfScriptFolder& first = *folders.back();
    uint64_t folded_here = 0;
    auto fold_here = [&](const Block& b) {
      // (Its lines counted here: the reader need not count them again, if it gave none since.)
      blocks.CountedLines(b, first.AddBlock(b.data, b.first_line, source.name()));
      if (b.releasable) ReleaseInput(b.data);
      folded_here += b.data.size();
    };
    const bool here_first = threads_ <= 1 || opt_.one_thread_text_bytes > 0;
    if (here_first) fold_here(block);
    Block next;
    bool more = blocks.Next(&next);
    std::optional<Block> to_queue;  // the first block, when the workers take it
    if (here_first || !more) {
      if (!here_first) fold_here(block);
      while (more && (threads_ <= 1 || folded_here < opt_.one_thread_text_bytes)) {
        fold_here(next);
        more = blocks.Next(&next);
      }
    } else {
      to_queue = std::move(block);
    }
    if (more) {
      if (event_filter_.empty()) event_filter_ = first.event_filter();
      BlockQueue queue(threads_ * 2);
      std::vector<std::thread> workers;
      std::vector<std::exception_ptr> errors(threads_);
      while (folders.size() < threads_) {
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
        if (to_queue && !queue.Push({std::move(*to_queue), event_filter_})) more = false;
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
    MergeFolders(folders, tree, source.name());
  }

  // The folders' trees into `tree`, their notes into the report (NoteFolders).
  void MergeFolders(std::vector<std::unique_ptr<PerfScriptFolder>>& folders, StackTree& tree,
                    const std::string& name) {
    for (auto& f : folders) {
      f->tree().set_unit(f->Unit());
      // Into a tree that holds nothing yet (the first input), the first folder's tree moves:
      // merging it would copy it and intern all its names again (a fifth of a capture's fold
      // with --addrs).
      if (tree.size() == 1 && !tree.has_self(StackTree::kRoot) && tree.names().size() == 0 &&
          !tree.differential()) {
        tree = std::move(f->tree());
      } else {
        tree.Merge(f->tree());
      }
    }
    NoteFolders(folders, name);
  }

  // The perf script folders' notes into the report (lines skipped, samples, events left out,
  // the unit); an error when nothing in input `name` was perf script text. Returns the unit of
  // their weights.
  WeightUnit NoteFolders(std::vector<std::unique_ptr<PerfScriptFolder>>& folders,
                         const std::string& name) {
    SkipCount skipped;
    uint64_t samples = 0, others = 0;
    WeightUnit unit = WeightUnit::kUnspecified;
    for (auto& f : folders) {
      unit = CombineUnits(unit, f->Unit());
      skipped.Merge(f->skipped_lines());
      samples += f->samples();
      others += f->other_event_samples();
      other_event_samples_ += f->other_event_samples();
      NoteOtherEvents(f->other_events());
      if (event_filter_.empty()) event_filter_ = f->event_filter();
    }
    NoteInputUnit(unit, name);
    std::sort(other_events_.begin(), other_events_.end());
    if (skipped.count) report_->warnings.push_back(SkippedMessage(skipped, ""));
    report_->skipped_lines += skipped.count;
    if (samples == 0 && others == 0 && skipped.count) {
      throw Error(Where(name, skipped.first_line),
                  "nothing in the input parsed as `perf script` text (" +
                      Plural(skipped.count, "line", "lines") + " not understood); pf reads " +
                      FormatsPfReads());
    }
    uint64_t no_cpu_line = 0;
    for (auto& f : folders) {
      if (f->no_cpu_line() && (!no_cpu_line || f->no_cpu_line() < no_cpu_line)) {
        no_cpu_line = f->no_cpu_line();
      }
    }
    if (no_cpu_line) {
      throw Error(Where(name, no_cpu_line),
                  "--per-cpu: this sample shows no CPU ([003] after the thread); print it with "
                  "perf script -F +cpu, or record with -a");
    }
    report_->samples += samples;
    report_->perf_samples += samples;
    return unit;
  }

  // The event kept, and the samples of others left out (a notice when no --event-filter chose).
  void NoteEvents() {
    if (other_event_samples_ && opt_.perf.event_filter.empty()) {
      std::string others;
      for (const std::string& e : other_events_) others += (others.empty() ? "" : ", ") + e;
      report_->notices.push_back("kept the samples of the first event type, " + event_filter_ +
                                 "; skipped " + Plural(other_event_samples_, "sample", "samples") +
                                 " of " + others + " (choose with --event-filter=EVENT)");
    }
    report_->event = event_filter_;
    report_->other_event_samples = other_event_samples_;
  }

  // The events whose samples were left out, each named once (TakeTree's notice).
  void NoteOtherEvents(const std::vector<std::string>& events) {
    for (const std::string& e : events) {
      if (std::find(other_events_.begin(), other_events_.end(), e) == other_events_.end()) {
        other_events_.push_back(e);
      }
    }
  }

  // A text input cannot be selected from: its samples do not carry what the selection reads.
  void RefuseSelection(const ByteSource& source, const char* what) const {
    if (select_.empty()) return;
    throw UsageError(source.name() + ": is " + what + "; --comms, --pids, --tids, --cpu " +
                     "and --time select samples of recordings (perf.data, pf-record " +
                     "streams): give them to perf script or pf-script instead");
  }

  const CollapseOptions& opt_;
  ReadReport* report_;
  StackFilter filter_;
  SampleSelection select_;
  unsigned threads_;
  std::string event_filter_;
  std::vector<TimedSample> timed_;  // --time-order: the recording's samples
  std::optional<StackTree> tree_;
  WeightUnit first_unit_ = WeightUnit::kUnspecified;  // NoteInputUnit
  std::string first_unit_input_;
  bool units_warned_ = false;
  uint64_t other_event_samples_ = 0;
  std::vector<std::string> other_events_;
};

Collapser::Collapser(const CollapseOptions& options, ReadReport* report)
    : impl_(std::make_unique<Impl>(options, report)) {}

Collapser::~Collapser() = default;

void Collapser::Add(ByteSource& source) { impl_->Add(source); }

StackTree Collapser::TakeTree() { return impl_->TakeTree(); }

StackTree Collapser::TakeTimeline(std::vector<TimedSample>* samples) {
  return impl_->TakeTimeline(samples);
}

WeightUnit Collapser::AddPerfScriptToList(ByteSource& source, StackList* list) {
  return impl_->AddPerfScriptToList(source, list);
}

void WriteCollapsed(const StackTree& tree, ByteSink& out, ReadReport* report) {
  if (tree.saturated()) report->warnings.push_back(SaturationWarning(tree.saturated()));
  BufferedWriter w(out);
  WriteFolded(tree, w);
  w.Flush();
  out.Commit();
}

void CollapseSources(std::vector<std::unique_ptr<ByteSource>> sources,
                     const CollapseOptions& options, ByteSink& out, ReadReport* report) {
  Collapser c(options, report);
  for (auto& s : sources) c.Add(*s);
  WriteCollapsed(c.TakeTree(), out, report);
}

}  // namespace pf
