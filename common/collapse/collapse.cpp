#include "collapse/collapse.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "base/teardown.h"
#include "formats/sniff.h"
#include "io/line_reader.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "stacks/folded.h"

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

// A bounded queue of blocks for the worker threads.
class BlockQueue {
 public:
  explicit BlockQueue(size_t capacity) : capacity_(capacity) {}
  void Push(Block b, std::string filter) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back({std::move(b), std::move(filter)});
    not_empty_.notify_one();
  }
  bool Pop(Block* b, std::string* filter) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    *b = std::move(items_.front().first);
    *filter = std::move(items_.front().second);
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<Block, std::string>> items_;
  size_t capacity_;
  bool closed_ = false;
};

class Collapser {
 public:
  // Compiles the filters first, so a bad pattern fails before any input is read.
  Collapser(const CollapseOptions& options, CollapseReport* report)
      : opt_(options), report_(report), filter_(options.filter) {
    threads_ = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    event_filter_ = options.perf.event_filter;
  }

  void Add(ByteSource& source) {
    std::string_view head = source.Peek();
    InputFormat format = SniffFormat(head);
    if (opt_.format == "perf-script" && format == InputFormat::kFolded) {
      format = InputFormat::kPerfScript;
    } else if (opt_.format == "folded" && format == InputFormat::kPerfScript) {
      format = InputFormat::kFolded;
    }
    switch (format) {
      case InputFormat::kEmpty:
        return;
      case InputFormat::kPerfData:
        AddPerfData(source);
        return;
      case InputFormat::kBinary:
        throw Error(source.name(),
                    "binary data, not `perf script` text or folded stacks");
      case InputFormat::kFolded:
        AddFolded(source);
        return;
      case InputFormat::kPerfScript:
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
    if (opt_.filter.empty()) return std::move(*tree_);
    return filter_.Apply(*tree_);
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
    FoldedReader reader(tree);
    BlockReader blocks(source, BlockReader::kLineBoundary);
    Block block;
    while (blocks.Next(&block)) {
      reader.AddBlock(block.data, block.first_line, source.name());
      if (block.releasable) ReleaseInput(block.data);
    }
    NoteOverlong(blocks, source.name());
    if (reader.malformed().count) {
      report_->warnings.push_back(SkippedMessage(reader.malformed(), " (not `stack count`)"));
    }
    if (reader.fractional_lines()) {
      report_->warnings.push_back(source.name() + ": " +
                                  Plural(reader.fractional_lines(), "count", "counts") +
                                  " had a fractional part, dropped");
    }
    report_->folded_lines += reader.stacks_read();
    for (const std::string& c : reader.pf_comments()) report_->pf_comments.push_back(c);
  }

  // A recording (pf-record stream or perf.data): the result equals folding pf-script's text,
  // because that is how each distinct sample is folded; but a sample is first folded by its
  // addresses (event, thread, comm, maps generation, call chain) and only a new one is
  // symbolized and turned into text, so repeated stacks cost a hash and a lookup.
  void AddPerfData(ByteSource& source) {
    StackTree& tree = Tree(1, source.name());
    PerfDataReader reader(source);
    // Kept, not destroyed, when the process ends after this (base/teardown.h).
    auto symbolizer_owner = std::make_unique<Symbolizer>(Symbolizer::Options{});
    Symbolizer& symbolizer = *symbolizer_owner;
    symbolizer.SetEmbedded(&reader.embedded_symbols());
    symbolizer.SetKernelBuildId(KernelBuildId(reader));
    if (KernelSampled(reader)) symbolizer.PrefetchKernelSymbols();
    auto session_owner = std::make_unique<Session>(symbolizer);
    Session& session = *session_owner;
    session.SetInline(opt_.perf.inline_frames);
    session.SetSrcline(opt_.perf.srcline);
    session.PrefetchDwarf(reader);
    auto folder_owner = std::make_unique<PerfScriptFolder>(opt_.perf, event_filter_);
    PerfScriptFolder& folder = *folder_owner;
    ScriptFields fields;  // perf script's default output (with -F +srcline for --srcline)
    fields.srcline = opt_.perf.srcline;
    std::vector<ResolvedFrame> frames;
    std::vector<uint64_t> chain_scratch;
    std::string text, ids_text;
    struct Cached {
      NodeId leaf;
      bool filtered;
      bool reuse;  // false: the fold of this key's samples depends on their time (below)
      std::string frames;  // then: the frame lines of their text, after the event line
    };
    struct KeyHash {
      size_t operator()(const XXH128_hash_t& k) const { return k.low64; }
    };
    struct KeyEq {
      bool operator()(const XXH128_hash_t& a, const XXH128_hash_t& b) const {
        return a.low64 == b.low64 && a.high64 == b.high64;
      }
    };
    std::unordered_map<XXH128_hash_t, Cached, KeyHash, KeyEq> cache;
    struct Named {
      NodeId leaf;
      bool filtered;
    };
    std::unordered_map<XXH128_hash_t, Named, KeyHash, KeyEq> named;
    // What the fold reads of a sample's frames: names, dsos, marks and source lines; the
    // addresses only for --addrs ("[dso <addr>]").
    // (Keys are hashed whole from a buffer: XXH3's streaming calls cost more than the bytes.)
    std::string key_bytes;
    auto add_bytes = [&](const void* p, size_t n) {
      key_bytes.append(static_cast<const char*>(p), n);
    };
    auto NamedKey = [&](const uint64_t (&ids)[6], std::string_view comm_name,
                        const std::vector<ResolvedFrame>& resolved, bool srcline) {
      key_bytes.clear();
      uint64_t no_generation[6] = {ids[0], ids[1], ids[2], ids[3], 0, ids[5]};
      add_bytes(no_generation, sizeof no_generation);
      add_bytes(comm_name.data(), comm_name.size());
      for (const ResolvedFrame& f : resolved) {
        uint64_t sizes[4] = {f.sym.size(), f.dso.size(), srcline ? f.srcline.size() : 0,
                             uint64_t{f.has_sym} | uint64_t{f.kernel} << 1 |
                                 uint64_t{f.inlined} << 2};
        add_bytes(sizes, sizeof sizes);
        add_bytes(f.sym.data(), f.sym.size());
        add_bytes(f.dso.data(), f.dso.size());
        if (srcline) add_bytes(f.srcline.data(), f.srcline.size());
        if (opt_.perf.include_addrs) add_bytes(&f.addr, sizeof f.addr);
      }
      return XXH3_128bits(key_bytes.data(), key_bytes.size());
    };
    uint64_t samples = 0, filtered_hits = 0;
    ReplayOrdered(reader, [&](const Record& r) {
      if (r.type != kRecordSample) {
        session.OnRecord(reader, r);
        return;
      }
      Sample s;
      if (!reader.ParseSample(r, &s)) return;
      std::string_view comm = session.Comm(s.pid, s.tid);
      uint64_t head[6] = {reinterpret_cast<uintptr_t>(s.attr), s.pid, s.tid,
                          static_cast<uint64_t>(s.misc & 7), session.MapsGeneration(s.pid),
                          s.callchain.empty() ? s.ip : 0};
      // A DWARF sample's chain is unwound here (its recorded chain is the kernel's part).
      std::span<const uint64_t> chain = session.Callchain(s, &chain_scratch);
      key_bytes.clear();
      add_bytes(head, sizeof head);
      uint64_t comm_size = comm.size();
      add_bytes(&comm_size, sizeof comm_size);
      add_bytes(comm.data(), comm.size());
      add_bytes(chain.data(), chain.size() * 8);
      XXH128_hash_t key = XXH3_128bits(key_bytes.data(), key_bytes.size());
      uint64_t weight = opt_.perf.weight_samples || s.period == 0 ? 1 : s.period;
      // A sample folded as an earlier one was: its weight on the same leaf.
      auto fold_as = [&](NodeId leaf, bool filtered) {
        if (leaf != PerfScriptFolder::kNoLeaf) {
          folder.tree().AddSelf(leaf, weight);
          ++samples;
        } else if (filtered) {
          ++filtered_hits;
        }
      };
      auto it = cache.find(key);
      if (it != cache.end() && it->second.reuse) {
        fold_as(it->second.leaf, it->second.filtered);
        return;
      }
      if (s.attr->sample_type & (1 << 8)) s.period = weight;  // the text carries the weight
      text.clear();
      fields.period = s.attr->sample_type & (1 << 8);
      fields.cpu = false;
      fields.time = s.attr->sample_type & (1 << 2);
      uint64_t filtered_before = folder.other_event_samples();
      if (it != cache.end() && !it->second.frames.empty()) {
        // A key folded sample by sample: only its event line is new.
        AppendSampleHead(session, s, chain, fields, &text);
        text += it->second.frames;
        if (folder.FoldSample(text, source.name()) != PerfScriptFolder::kNoLeaf) ++samples;
        return;
      }
      // A new chain of addresses often folds as an earlier one did: the fold reads names, not
      // addresses or offsets (a loop's samples differ in their leaf's address alone). So the
      // frames are keyed again by what the fold reads of them.
      session.Frames(s, chain, &frames);
      XXH128_hash_t named_key = NamedKey(head, comm, frames, fields.srcline);
      if (auto n = named.find(named_key); n != named.end()) {
        cache.emplace(key, Cached{n->second.leaf, n->second.filtered, true, {}});
        fold_as(n->second.leaf, n->second.filtered);
        return;
      }
      AppendResolvedSample(session, s, chain, fields, frames, &text);
      NodeId leaf = folder.FoldSample(text, source.name());
      // The key leaves out the time and the period, which the fold reads past the comm and
      // thread only when the Perl script's event-line pattern takes them into the comm (a
      // one-letter comm before a five-digit thread id: `w 19375  8425.338890:    1001001`
      // gives the comm `w 19375  8425.338890:`, a new one each sample). Such samples are
      // folded one by one. A match that ends within the comm and ids (`c  8261  9196.3:`
      // gives `c `, the same each time) depends on the key alone.
      EventHead event_head;
      size_t eol = text.find('\n');
      std::string_view first_line = std::string_view(text).substr(0, eol);
      bool reuse = false;
      if (MatchEventHead(first_line, &event_head)) {
        ScriptFields ids = fields;
        ids.cpu = ids.time = ids.period = ids.event = false;
        ids_text.clear();
        AppendSampleHead(session, s, chain, ids, &ids_text);
        size_t match_end = event_head.tid.data() + event_head.tid.size() - first_line.data();
        reuse = match_end < ids_text.size() && first_line.starts_with(ids_text);
      }
      if (it == cache.end()) {
        Cached c{leaf, folder.other_event_samples() != filtered_before, reuse, {}};
        if (!reuse && eol != std::string::npos) c.frames = text.substr(eol);
        if (reuse) named.emplace(named_key, Named{c.leaf, c.filtered});
        cache.emplace(key, std::move(c));
      }
      if (leaf != PerfScriptFolder::kNoLeaf) ++samples;
    });
    if (event_filter_.empty()) event_filter_ = folder.event_filter();
    tree.Merge(folder.tree());
    other_event_samples_ += folder.other_event_samples() + filtered_hits;
    for (const std::string& e : folder.other_events()) {
      if (std::find(other_events_.begin(), other_events_.end(), e) == other_events_.end()) {
        other_events_.push_back(e);
      }
    }
    if (reader.truncated()) {
      report_->warnings.push_back(source.name() +
                                  ": the recording ends early (cut short?); folded what is whole");
    }
    report_->samples += samples;
    session.StopPrefetch();
    KeepUntilExit(std::move(folder_owner), std::move(session_owner), std::move(symbolizer_owner));
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
          try {
            Block b;
            std::string filter;
            while (queue.Pop(&b, &filter)) {
              folders[i]->SetEventFilter(filter);
              folders[i]->AddBlock(b.data, b.first_line, source.name());
              if (b.releasable) ReleaseInput(b.data);
            }
          } catch (...) {
            errors[i] = std::current_exception();
          }
        });
      }
      try {
        queue.Push(std::move(block), event_filter_);
        while (more) {
          // Until an event type is known, look ahead so every worker filters alike.
          if (event_filter_.empty()) FindFirstEvent(next.data, &event_filter_);
          queue.Push(std::move(next), event_filter_);
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
    uint64_t samples = 0;
    for (auto& f : folders) {
      tree.Merge(f->tree());
      skipped.Merge(f->skipped_lines());
      samples += f->samples();
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
    if (samples == 0 && skipped.count) {
      report_->warnings.push_back(source.name() +
                                  ": no samples found; is it `perf script` output?");
    }
    report_->samples += samples;
  }

  const CollapseOptions& opt_;
  CollapseReport* report_;
  StackFilter filter_;
  unsigned threads_;
  std::string event_filter_;
  std::optional<StackTree> tree_;
  uint64_t other_event_samples_ = 0;
  std::vector<std::string> other_events_;
};

}  // namespace

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
  BufferedWriter w(out);
  WriteFolded(tree, w);
  w.Flush();
  out.Commit();
}

}  // namespace pf
