// pprof profile.proto into a stack tree (collapse/pprof_read.h).
//
// The decoder (formats/pprof.cpp) hands over plain indexes; this step names frames and adds
// stacks. A location's frames are named once, the first time a sample reaches it, and kept
// as interned ids root first (a location's lines are innermost first, so they are
// reversed): a sample's stack is its label frames of --tag, then its locations' frames from
// its last location (the root) to its first (the leaf), all laid out in one array.
// The stacks are then sorted by their frames, so that each shares with the one before it
// the longest prefix any stack before it has: the rest of it is new nodes, appended to the
// tree without a lookup (StackTree::AddNewPath), and counted first so the tree is sized
// once. Tree lookups and hash inserts, memory-bound, were most of the work on a large
// profile; the tree's index is built later, only if something searches it.
// Names follow `pprof -traces` at its default (function) granularity: the function's name,
// "[BINARY]" for an address in a mapped file that has no function, "<unknown>" without one;
// pf first asks its own symbolizer for such an address, through the mapping's file, build-id
// and offsets, so a profile written without symbols (pprof -symbolize=none, Parca and
// Pyroscope exports, converted perf data) is named where the binaries are found.
//
// The profile's drop_frames and keep_frames prune stacks as pprof prunes them (Prune).
// Values are signed in pprof and unsigned in pf: a negative value (a `pprof -diff_base`
// profile) is left out and counted. Time in units coarser than nanoseconds is converted to
// nanoseconds exactly (saturating), so a flame graph shows time as time.

#include "collapse/pprof_read.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <re2/re2.h>

#include "base/diagnostics.h"
#include "base/error.h"
#include "base/prefetch.h"
#include "pfstream/binary_tables.h"
#include "pfstream/frame_namer.h"
#include "pfstream/process_maps.h"

namespace pf {

namespace {

// The unit of a pprof sample type and the factor that turns its values into that unit.
struct ColumnUnit {
  WeightUnit unit;
  uint64_t scale = 1;
};

ColumnUnit UnitOf(std::string_view name, std::string_view unit) {
  if (unit == "count" || unit == "samples") {
    bool objects = name.size() >= 7 && name.substr(name.size() - 7) == "objects";
    return {objects ? WeightUnit::kObjects : WeightUnit::kSamples};
  }
  if (unit == "nanoseconds" || unit == "ns") return {WeightUnit::kNanoseconds};
  if (unit == "microseconds" || unit == "us") return {WeightUnit::kNanoseconds, 1000};
  if (unit == "milliseconds" || unit == "ms") return {WeightUnit::kNanoseconds, 1000000};
  if (unit == "seconds" || unit == "s") return {WeightUnit::kNanoseconds, 1000000000};
  if (unit == "bytes" || unit == "B") return {WeightUnit::kBytes};
  WeightUnit u;
  if (ParseUnitKeyword(unit, &u) && u != WeightUnit::kUnspecified) return {u};
  return {WeightUnit::kEvents};
}

// A numeric label's value as pprof's tag frames show it: scaled to the largest unit that
// keeps it at least 1, two decimals with ".00" dropped ("64kB", "1.50ms"); other units after
// the number; "bytes" is the unit of the "bytes" key when none is given (Go's heap labels).
std::string FormatNumericLabel(std::string_view key, int64_t num, std::string_view unit) {
  if (unit.empty() && key == "bytes") unit = "bytes";
  struct Step {
    const char* name;
    double factor;
  };
  static constexpr Step kBytes[] = {{"B", 1}, {"kB", 1024.0}, {"MB", 1048576.0},
                                    {"GB", 1073741824.0}, {"TB", 1099511627776.0}};
  static constexpr Step kTime[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  const Step* steps = nullptr;
  size_t n = 0;
  if (unit == "bytes" || unit == "B") {
    steps = kBytes;
    n = std::size(kBytes);
  } else if (unit == "nanoseconds" || unit == "ns") {
    steps = kTime;
    n = std::size(kTime);
  }
  if (!steps) return std::to_string(num) + std::string(unit);
  double v = static_cast<double>(num);
  double mag = v < 0 ? -v : v;
  size_t i = 0;
  while (i + 1 < n && mag >= steps[i + 1].factor) ++i;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v / steps[i].factor);
  std::string s = buf;
  if (s.size() > 3 && s.substr(s.size() - 3) == ".00") s.resize(s.size() - 3);
  if (s == "0" || s == "-0") return "0";
  return s + steps[i].name;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The functions DWARF says are inlined at an address pf names itself: pprof's own
// symbolization lists them as lines of the location (`addr2line -i`). They come from the
// FrameNamer a recording's frames are named by, the profile's mappings as one process's.
class InlinedAt {
 public:
  InlinedAt(const PprofProfile& p, Symbolizer& symbolizer)
      : tables_(maps_, symbolizer), namer_(maps_, tables_, symbolizer) {
    for (const PprofProfile::Mapping& m : p.mappings) {
      if (m.filename.empty() || m.filename.front() != '/' || m.memory_limit <= m.memory_start) {
        continue;
      }
      maps_.AddUserMap(kPid, m.memory_start, m.memory_limit, m.file_offset, m.filename,
                       m.build_id);
    }
  }
  /// Appends the functions inlined at `address`, outermost first (not the one they are in).
  void Append(uint64_t address, std::vector<std::string>* out) {
    frames_.clear();
    namer_.UserFrames(kPid, address, &frames_);
    // (Innermost first, then the frame itself, last: perf's name for it may be another.)
    for (size_t i = frames_.size() > 0 ? frames_.size() - 1 : 0; i-- > 0;) {
      out->emplace_back(frames_[i].sym);
    }
  }

 private:
  static constexpr uint32_t kPid = 0;  // (0: never looked up under /proc)
  ProcessMaps maps_;
  BinaryTables tables_;
  FrameNamer namer_;
  std::vector<ResolvedFrame> frames_;
};

class TreeBuilder {
 public:
  TreeBuilder(const PprofProfile& p, const std::string& name, const std::vector<std::string>& tags,
              const Symbolizer::Options* symbols, bool inline_frames, bool srcline)
      : p_(p),
        name_(name),
        tags_(tags),
        symbols_(symbols),
        inline_frames_(inline_frames),
        srcline_(srcline) {}

  StackTree Build(ReadReport* report) {
    if (p_.sample_types.empty()) {
      if (!p_.samples.empty()) throw Error(name_, "pprof profile with samples but no sample types");
      return StackTree();
    }
    StackTree tree(Columns());
    tree.set_default_column(default_);
    names_ = &tree.names();
    samples_ = p_.samples;
    inner_skip_.assign(p_.locations.size(), 0);
    Prune();
    uint64_t negative = 0;
    const std::vector<uint32_t> kept = KeptSamples(&negative);
    Stacks(kept);
    // The stacks sorted by their frames: each shares with the one before it the longest
    // prefix that any stack before it has, so the rest of it is new nodes, appended without
    // a lookup (StackTree::AddNewPath); the tree is sized to them first.
    const std::vector<uint32_t> sorted = SortedStacks();
    std::vector<uint32_t> shared(sorted.size());
    tree.Reserve(SharedPrefixes(sorted, &shared));
    std::vector<NodeId> nodes;  // nodes[i]: the node of the previous stack's first i + 1 frames
    for (size_t at = 0; at < sorted.size(); ++at) {
      // The samples come in an order of their own: their records and values are fetched a
      // few samples ahead.
      if (at + 8 < sorted.size()) Prefetch(&samples_[kept[sorted[at + 8]]]);
      if (at + 4 < sorted.size()) {
        Prefetch(p_.values.data() + samples_[kept[sorted[at + 4]]].first_value);
        Prefetch(stacks_.data() + stack_first_[sorted[at + 4]] + shared[at + 4]);
      }
      const uint32_t i = sorted[at];
      const StrId* frames = stacks_.data() + stack_first_[i];
      const size_t length = stack_first_[i + 1] - stack_first_[i];
      const uint32_t k = shared[at];
      const uint32_t first_new = static_cast<uint32_t>(tree.size());
      const NodeId leaf = tree.AddNewPath(k ? nodes[k - 1] : StackTree::kRoot,
                                          {frames + k, length - k});
      nodes.resize(length);
      for (size_t j = k; j < length; ++j) nodes[j] = NodeId(first_new + uint32_t(j - k));
      const PprofProfile::Sample& s = samples_[kept[i]];
      for (int c = 0; c < tree.columns(); ++c) {
        int64_t v = p_.values[s.first_value + order_[c]];
        if (v <= 0) continue;
        uint64_t w = MulSat(static_cast<uint64_t>(v), scale_[c]);
        if (w == UINT64_MAX) tree.NoteSaturated();
        tree.AddSelf(leaf, w, c);
      }
    }
    Report(kept.size(), negative, report);
    return tree;
  }

 private:
  static constexpr uint32_t kUnnamed = UINT32_MAX;

  // pprof's drop_frames and keep_frames, as pprof applies them (profile.Prune): a location
  // whose function (outermost first, argument list removed) matches drop_frames wholly and
  // not keep_frames loses it and the functions inlined in it; a sample loses, from its first
  // location below its outermost one that is not dropped, the first such location and
  // everything below it (only the inlined part, when the location keeps outer functions).
  void Prune() {
    if (p_.drop_frames.empty()) return;
    RE2::Options options;
    options.set_log_errors(false);
    RE2 drop("(?:" + std::string(p_.drop_frames) + ")", options);
    RE2 keep("(?:" + std::string(p_.keep_frames) + ")", options);
    if (!drop.ok()) {
      throw Error(name_, "pprof profile's drop_frames is not a regular expression: " +
                             drop.error());
    }
    const bool use_keep = !p_.keep_frames.empty() && keep.ok();
    enum : uint8_t { kKeep, kBeneath, kWhole };
    std::vector<uint8_t> state(p_.locations.size(), kKeep);
    for (size_t l = 0; l < p_.locations.size(); ++l) {
      const PprofProfile::Location& loc = p_.locations[l];
      for (uint32_t i = loc.lines; i-- > 0;) {
        const PprofProfile::Line& line = p_.lines[loc.first_line + i];
        if (line.function == PprofProfile::kNone) continue;
        std::string_view fn = p_.functions[line.function].name;
        if (fn.empty()) continue;
        std::string_view simple = SimplifiedName(fn);
        if (!RE2::FullMatch(simple, drop) || (use_keep && RE2::FullMatch(simple, keep))) continue;
        state[l] = i == loc.lines - 1 ? kWhole : kBeneath;
        if (state[l] == kBeneath) inner_skip_[l] = i + 1;
        break;
      }
    }
    for (PprofProfile::Sample& s : samples_) {
      const uint32_t* ids = p_.location_ids.data() + s.first_location;
      bool user = false;
      for (uint32_t i = s.locations; i-- > 0;) {  // root first
        uint8_t st = state[ids[i]];
        if (st == kKeep) {
          user = true;
          continue;
        }
        if (!user) continue;
        uint32_t cut = st == kWhole ? i + 1 : i;  // leaf-first locations dropped
        s.first_location += cut;
        s.locations -= cut;
        break;
      }
    }
  }

  // A function's name as pprof's pruning matches it: without a leading '.' (PPC64 ELFv1)
  // and without its argument list (from the first '(' that does not start "(anonymous
  // namespace)" or end "operator()").
  static std::string_view SimplifiedName(std::string_view fn) {
    if (!fn.empty() && fn.front() == '.') fn.remove_prefix(1);
    for (size_t at = fn.find('('); at != std::string_view::npos; at = fn.find('(', at + 1)) {
      if (fn.substr(at, 21) == "(anonymous namespace)") continue;
      if (at >= 8 && fn.substr(at - 8, 10) == "operator()") continue;
      return fn.substr(0, at);
    }
    return fn;
  }

  // What reading found: the samples kept, the negative values and the addresses left
  // unnamed, counted.
  void Report(uint64_t kept, uint64_t negative, ReadReport* report) const {
    if (!report) return;
    report->samples += kept;
    if (negative) {
      report->warnings.push_back(
          name_ + ": " + Plural(negative, "negative value", "negative values") +
          " left out (a pprof -diff_base profile? pf-diff compares two profiles)");
    }
    if (unsymbolized_) {
      report->warnings.push_back(
          name_ + ": " + Plural(unsymbolized_, "address", "addresses") +
          " without a function and not found in their binaries (named [BINARY] as pprof "
          "does; --symfs says where copies of the binaries are)");
    }
  }

  // The samples that weigh something (a positive value in some column), in the profile's
  // order; *negative counts the negative values, which are left out.
  std::vector<uint32_t> KeptSamples(uint64_t* negative) const {
    std::vector<uint32_t> kept;
    kept.reserve(samples_.size());
    const size_t columns = order_.size();
    for (uint32_t i = 0; i < samples_.size(); ++i) {
      const int64_t* values = p_.values.data() + samples_[i].first_value;
      bool any = false;
      for (size_t c = 0; c < columns; ++c) {
        const int64_t v = values[order_[c]];
        *negative += v < 0;
        any = any || v > 0;
      }
      if (any) kept.push_back(i);
    }
    return kept;
  }

  // Every kept sample's stack, root first (its tag frames, then its locations' frames), one
  // after the other in stacks_: kept sample i's are stacks_[stack_first_[i]..[i + 1]).
  // Each location is named once, the first time a sample reaches it.
  void Stacks(const std::vector<uint32_t>& kept) {
    location_first_.assign(p_.locations.size(), kUnnamed);
    location_count_.assign(p_.locations.size(), 0);
    size_t total = kept.size() * tags_.size();
    for (uint32_t index : kept) {
      const PprofProfile::Sample& s = samples_[index];
      const uint32_t* locs = p_.location_ids.data() + s.first_location;
      for (uint32_t l = s.locations; l-- > 0;) {
        if (location_first_[locs[l]] == kUnnamed) NameLocation(locs[l]);
        total += location_count_[locs[l]];
      }
    }
    stacks_.reserve(total);
    stack_first_.resize(kept.size() + 1);
    stack_first_[0] = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      const PprofProfile::Sample& s = samples_[kept[i]];
      AddTagFrames(s, &stacks_);
      const uint32_t* locs = p_.location_ids.data() + s.first_location;
      for (uint32_t l = s.locations; l-- > 0;) {
        const StrId* f = frames_.data() + location_first_[locs[l]];
        stacks_.insert(stacks_.end(), f, f + location_count_[locs[l]]);
      }
      stack_first_[i + 1] = stacks_.size();
    }
  }

  // For each stack of `sorted` (SortedStacks), the frames it shares with the one before, in
  // *shared; returns the frames they do not share: the nodes the tree gets.
  size_t SharedPrefixes(const std::vector<uint32_t>& sorted, std::vector<uint32_t>* shared) const {
    size_t total = 0;
    const StrId* prev = nullptr;
    size_t prev_length = 0;
    for (size_t at = 0; at < sorted.size(); ++at) {
      if (at + 4 < sorted.size()) Prefetch(stacks_.data() + stack_first_[sorted[at + 4]]);
      const uint32_t i = sorted[at];
      const StrId* frames = stacks_.data() + stack_first_[i];
      const size_t length = stack_first_[i + 1] - stack_first_[i];
      const size_t common = std::min(length, prev_length);
      size_t k = 0;
      while (k < common && frames[k] == prev[k]) ++k;
      (*shared)[at] = static_cast<uint32_t>(k);
      total += length - k;
      prev = frames;
      prev_length = length;
    }
    return total;
  }

  // The kept samples' stacks (Stacks), as indexes, ordered by their frames root first
  // (shorter first on a tie). They are sorted by a key that packs their first frames (as
  // many as fit in 128 bits); the stacks whose keys tie are then sorted by the key of their
  // next frames, and so on: each stack is read once per key, in a pass, rather than by every
  // comparison that reaches past its key.
  std::vector<uint32_t> SortedStacks() const {
    struct Item {
      uint64_t key[2];
      uint32_t index;
    };
    int bits = 1;
    while (bits < 32 && (uint64_t{1} << bits) <= names_->size() + 1) ++bits;
    const uint32_t per_word = 64 / bits;
    // Item `it`'s key of the frames from `depth` on: frame id + 1 (0: the stack ended).
    auto make_key = [&](Item& it, size_t depth) {
      const StrId* frames = stacks_.data() + stack_first_[it.index];
      const size_t length = stack_first_[it.index + 1] - stack_first_[it.index];
      for (uint32_t w = 0; w < 2; ++w) {
        uint64_t key = 0;
        for (size_t level = depth + w * per_word; level < depth + (w + 1) * per_word; ++level) {
          key = (key << bits) | (level < length ? uint64_t{frames[level].value} + 1 : 0);
        }
        it.key[w] = key;
      }
    };
    auto less = [](const Item& a, const Item& b) {
      return a.key[0] != b.key[0] ? a.key[0] < b.key[0] : a.key[1] < b.key[1];
    };
    const uint64_t last_level = (uint64_t{1} << bits) - 1;
    std::vector<Item> items(stack_first_.size() - 1);
    for (uint32_t i = 0; i < items.size(); ++i) {
      items[i].index = i;
      make_key(items[i], 0);
    }
    // Ranges [begin, end) of items sorted up to `depth`, each to sort by its next key.
    struct Range {
      size_t begin, end, depth;
    };
    std::vector<Range> todo{{0, items.size(), 0}};
    while (!todo.empty()) {
      const Range r = todo.back();
      todo.pop_back();
      if (r.depth) {
        for (size_t i = r.begin; i < r.end; ++i) make_key(items[i], r.depth);
      }
      std::sort(items.begin() + r.begin, items.begin() + r.end, less);
      for (size_t i = r.begin; i < r.end;) {
        size_t j = i + 1;
        while (j < r.end && !less(items[i], items[j])) ++j;
        // Stacks that tie on a key they end within are the same stack.
        if (j - i > 1 && (items[i].key[1] & last_level) != 0) {
          todo.push_back({i, j, r.depth + 2 * per_word});
        }
        i = j;
      }
    }
    std::vector<uint32_t> order(items.size());
    for (size_t i = 0; i < items.size(); ++i) order[i] = items[i].index;
    return order;
  }

  // The columns: the sample types in the profile's order (so --value's index is
  // -sample_index's); default_ is pprof's default one (default_sample_type, else the last).
  std::vector<SampleType> Columns() {
    const size_t n = p_.sample_types.size();
    default_ = static_cast<int>(n) - 1;
    if (!p_.default_sample_type.empty()) {
      for (size_t i = 0; i < n; ++i) {
        if (p_.sample_types[i].type == p_.default_sample_type) default_ = static_cast<int>(i);
      }
    }
    for (size_t i = 0; i < n; ++i) order_.push_back(static_cast<int>(i));
    std::vector<SampleType> types;
    for (int i : order_) {
      const PprofProfile::ValueType& t = p_.sample_types[i];
      ColumnUnit u = UnitOf(t.type, t.unit);
      types.push_back(SampleType{t.type.empty() ? std::string("samples") : std::string(t.type),
                                 u.unit});
      scale_.push_back(u.scale);
    }
    return types;
  }

  void AddTagFrames(const PprofProfile::Sample& s, std::vector<StrId>* stack) {
    for (const std::string& key : tags_) {
      std::string frame;
      for (int numeric = 0; numeric < 2; ++numeric) {  // strings first, as pprof
        for (uint32_t i = 0; i < s.labels; ++i) {
          const PprofProfile::Label& l = p_.labels[s.first_label + i];
          if (l.key != key || l.numeric != (numeric == 1)) continue;
          if (frame.empty()) {
            frame.append(key).push_back(':');
          } else {
            frame.push_back(',');
          }
          frame += l.numeric ? FormatNumericLabel(l.key, l.num, l.num_unit) : std::string(l.str);
        }
      }
      if (!frame.empty()) stack->push_back(names_->Intern(frame));
    }
  }

  void NameLocation(uint32_t index) {
    const PprofProfile::Location& loc = p_.locations[index];
    location_first_[index] = static_cast<uint32_t>(frames_.size());
    if (loc.lines == 0) {
      frames_.push_back(names_->Intern(AddressName(loc)));
      if (named_here_ && inline_frames_) {  // and the functions inlined there, pprof's lines
        if (!inlined_at_) inlined_at_ = std::make_unique<InlinedAt>(p_, *symbolizer_);
        inlined_.clear();
        inlined_at_->Append(loc.address, &inlined_);
        for (const std::string& f : inlined_) frames_.push_back(names_->Intern(f));
      }
    } else {
      for (uint32_t i = loc.lines; i-- > inner_skip_[index];) {  // innermost first in pprof
        const PprofProfile::Line& line = p_.lines[loc.first_line + i];
        std::string_view fn, file;
        if (line.function != PprofProfile::kNone) {
          fn = p_.functions[line.function].name;
          file = p_.functions[line.function].filename;
        }
        if (srcline_ && !file.empty() && line.line > 0) {  // --srcline: "f:file.go:12"
          std::string named(fn.empty() ? NoFunctionName(loc) : std::string(fn));
          named.append(":").append(file).append(":").append(std::to_string(line.line));
          frames_.push_back(names_->Intern(named));
          continue;
        }
        frames_.push_back(fn.empty() ? names_->Intern(NoFunctionName(loc)) : names_->Intern(fn));
      }
    }
    location_count_[index] = static_cast<uint32_t>(frames_.size()) - location_first_[index];
  }

  // pprof's name for a location without a function: its binary's base name, or <unknown>.
  std::string NoFunctionName(const PprofProfile::Location& loc) const {
    if (loc.mapping == PprofProfile::kNone || p_.mappings[loc.mapping].filename.empty()) {
      return "<unknown>";
    }
    std::string name(1, '[');
    name.append(BaseName(p_.mappings[loc.mapping].filename)).push_back(']');
    return name;
  }

  // A location with an address only: symbolized through its mapping when the binary is
  // found, else as pprof names it.
  std::string AddressName(const PprofProfile::Location& loc) {
    named_here_ = false;
    if (loc.mapping != PprofProfile::kNone && symbols_) {
      const PprofProfile::Mapping& m = p_.mappings[loc.mapping];
      if (!m.filename.empty() && m.filename.front() == '/' && loc.address >= m.memory_start) {
        if (!symbolizer_) symbolizer_ = std::make_unique<Symbolizer>(*symbols_);
        Symbol sym = symbolizer_->Lookup(m.filename, m.build_id,
                                         loc.address - m.memory_start + m.file_offset, 0);
        if (sym.found && !sym.name.empty()) {
          // Without the symbol version (__libc_start_main@@GLIBC_2.34), as pprof.
          std::string_view n = sym.name;
          size_t at = n.find('@');
          if (at != std::string_view::npos && at > 0) n = n.substr(0, at);
          named_here_ = true;
          return std::string(n);
        }
        ++unsymbolized_;
      }
    }
    return NoFunctionName(loc);
  }

  const PprofProfile& p_;
  const std::string& name_;
  const std::vector<std::string>& tags_;
  const Symbolizer::Options* symbols_;
  std::unique_ptr<Symbolizer> symbolizer_;
  bool inline_frames_;
  bool srcline_;  // each function's frame with its file and line
  bool named_here_ = false;                // AddressName's name came from pf's symbolizer
  std::unique_ptr<InlinedAt> inlined_at_;  // (made the first time it is asked)
  std::vector<std::string> inlined_;
  Interner* names_ = nullptr;
  std::vector<PprofProfile::Sample> samples_;  // the profile's, pruned (Prune)
  std::vector<uint32_t> inner_skip_;           // by location: inner lines pruned
  std::vector<int> order_;         // column -> sample type index
  int default_ = 0;                // the default column (Columns)
  std::vector<uint64_t> scale_;    // column -> factor to its unit
  std::vector<StrId> frames_;      // every named location's frames, root first
  std::vector<uint32_t> location_first_, location_count_;
  std::vector<StrId> stacks_;           // every kept sample's frames, root first (Stacks)
  std::vector<uint64_t> stack_first_;   // by kept sample: where its frames start in stacks_
  uint64_t unsymbolized_ = 0;
};

}  // namespace

StackTree PprofTree(const PprofProfile& profile, const std::string& name,
                    const std::vector<std::string>& tags, const Symbolizer::Options* symbols,
                    ReadReport* report, bool inline_frames, bool srcline) {
  return TreeBuilder(profile, name, tags, symbols, inline_frames, srcline).Build(report);
}

namespace {

// A varint of `data` at *at, stepped over: false when `data` ends first (more may come).
bool GatheredVarint(std::string_view data, uint64_t* at, uint64_t* value,
                    const std::string& name) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*at >= data.size()) return false;
    const auto byte = static_cast<uint8_t>(data[(*at)++]);
    *value |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return true;
  }
  throw Error(name, "not a valid pprof profile.proto: a varint longer than 10 bytes");
}

// Steps *at over the whole top-level fields of the message gathered so far in `data`. A key
// of field 0 or of a wire type protobuf lacks, or a length past `cap`, can never become a
// profile: gathering stops there (zeros after a real profile, a gzip bomb) instead of at the
// cap, with all of it in memory.
void CheckGathered(std::string_view data, uint64_t* at, uint64_t cap, const std::string& name) {
  while (*at < data.size()) {
    const uint64_t start = *at;
    uint64_t p = start, key = 0, length = 0;
    if (!GatheredVarint(data, &p, &key, name)) return;
    const uint64_t wire = key & 7;
    if ((key >> 3) == 0 || wire == 3 || wire == 4 || wire > 5) {
      throw Error(name, "not a valid pprof profile.proto: no field key at byte " +
                            std::to_string(start) + " (field " + std::to_string(key >> 3) +
                            ", wire type " + std::to_string(wire) + ")");
    }
    if (wire == 0 && !GatheredVarint(data, &p, &length, name)) return;
    if (wire == 0) length = 0;
    if (wire == 1) length = 8;
    if (wire == 5) length = 4;
    if (wire == 2) {
      if (!GatheredVarint(data, &p, &length, name)) return;
      if (length > cap) {
        throw Error(name, "not a valid pprof profile.proto: a field of " +
                              std::to_string(length) + " bytes at byte " + std::to_string(start) +
                              ", more than a profile may hold");
      }
    }
    *at = p + length;  // past `data` when the field is not all there yet
  }
}

}  // namespace

std::string_view GatherPprofBytes(ByteSource& source, std::string* storage, uint64_t cap) {
  if (source.stable()) {
    std::string_view all = source.Peek();
    if (all.size() > cap) ThrowPprofTooLarge(source.name(), cap);
    return all;
  }
  uint64_t checked = 0;  // the top-level fields before this offset are whole and well keyed
  for (std::string_view chunk = source.Next(); !chunk.empty(); chunk = source.Next()) {
    if (storage->size() + chunk.size() > cap) ThrowPprofTooLarge(source.name(), cap);
    storage->append(chunk);
    CheckGathered(*storage, &checked, cap, source.name());
  }
  return *storage;
}

StackTree ReadPprof(ByteSource& source, const std::vector<std::string>& tags,
                    const Symbolizer::Options& symbols, ReadReport* report, bool inline_frames,
                    bool srcline) {
  // The whole message: a mapped file as it is, anything else (a pipe, gzip) gathered.
  std::string storage;
  std::string_view data = GatherPprofBytes(source, &storage);
  PprofProfile profile = DecodePprof(data, source.name());
  return PprofTree(profile, source.name(), tags, &symbols, report, inline_frames, srcline);
}

}  // namespace pf
