// pprof profile.proto into a stack tree (collapse/pprof_read.h).
//
// The decoder (formats/pprof.cpp) hands over plain indexes; this step names frames and adds
// stacks. A location's frames are named once, the first time a sample reaches it, and kept
// as interned ids root first (a location's lines are innermost first, so they are
// reversed): a sample's stack is then the concatenation of its locations' frames, from its
// last location (the root) to its first (the leaf), with the label frames of --tag in front.
// Names follow `pprof -traces` at its default (function) granularity: the function's name,
// "[BINARY]" for an address in a mapped file that has no function, "<unknown>" without one;
// pf first asks its own symbolizer for such an address, through the mapping's file, build-id
// and offsets, so a profile written without symbols (pprof -symbolize=none, Parca and
// Pyroscope exports, converted perf data) is named where the binaries are found.
//
// Values are signed in pprof and unsigned in pf: a negative value (a `pprof -diff_base`
// profile) is left out and counted. Time in units coarser than nanoseconds is converted to
// nanoseconds exactly (saturating), so a flame graph shows time as time.

#include "collapse/pprof_read.h"

#include <cstdio>
#include <memory>

#include "base/diagnostics.h"
#include "base/error.h"

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

class TreeBuilder {
 public:
  TreeBuilder(const PprofProfile& p, const std::string& name, const std::vector<std::string>& tags,
              const Symbolizer::Options* symbols)
      : p_(p), name_(name), tags_(tags), symbols_(symbols) {}

  StackTree Build(ReadReport* report) {
    if (p_.sample_types.empty()) {
      if (!p_.samples.empty()) throw Error(name_, "pprof profile with samples but no sample types");
      return StackTree();
    }
    StackTree tree(Columns());
    names_ = &tree.names();
    location_first_.assign(p_.locations.size(), kUnnamed);
    location_count_.assign(p_.locations.size(), 0);
    std::vector<StrId> stack;
    uint64_t negative = 0, kept = 0;
    for (const PprofProfile::Sample& s : p_.samples) {
      stack.clear();
      AddTagFrames(s, &stack);
      for (uint32_t i = s.locations; i-- > 0;) {
        uint32_t loc = p_.location_ids[s.first_location + i];
        if (location_first_[loc] == kUnnamed) NameLocation(loc);
        const StrId* f = &frames_[location_first_[loc]];
        stack.insert(stack.end(), f, f + location_count_[loc]);
      }
      NodeId leaf = StackTree::kRoot;
      bool added = false;
      for (int c = 0; c < tree.columns(); ++c) {
        int64_t v = p_.values[s.first_value + order_[c]];
        if (v <= 0) {
          negative += v < 0;
          continue;
        }
        uint64_t w = MulSat(static_cast<uint64_t>(v), scale_[c]);
        if (w == UINT64_MAX) tree.NoteSaturated();
        if (!added) {
          leaf = tree.AddStack(stack, w, c);
          added = true;
        } else {
          tree.AddSelf(leaf, w, c);
        }
      }
      kept += added;
    }
    if (report) {
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
    return tree;
  }

 private:
  static constexpr uint32_t kUnnamed = UINT32_MAX;

  // The columns: the sample types in the profile's order, pprof's default one moved last.
  std::vector<SampleType> Columns() {
    const size_t n = p_.sample_types.size();
    size_t def = n - 1;
    if (!p_.default_sample_type.empty()) {
      for (size_t i = 0; i < n; ++i) {
        if (p_.sample_types[i].type == p_.default_sample_type) def = i;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (i != def) order_.push_back(static_cast<int>(i));
    }
    order_.push_back(static_cast<int>(def));
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
    } else {
      for (uint32_t i = loc.lines; i-- > 0;) {  // innermost first in pprof
        const PprofProfile::Line& line = p_.lines[loc.first_line + i];
        std::string_view fn;
        if (line.function != PprofProfile::kNone) fn = p_.functions[line.function].name;
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
  Interner* names_ = nullptr;
  std::vector<int> order_;         // column -> sample type index
  std::vector<uint64_t> scale_;    // column -> factor to its unit
  std::vector<StrId> frames_;      // every named location's frames, root first
  std::vector<uint32_t> location_first_, location_count_;
  uint64_t unsymbolized_ = 0;
};

}  // namespace

StackTree PprofTree(const PprofProfile& profile, const std::string& name,
                    const std::vector<std::string>& tags, const Symbolizer::Options* symbols,
                    ReadReport* report) {
  return TreeBuilder(profile, name, tags, symbols).Build(report);
}

StackTree ReadPprof(ByteSource& source, const std::vector<std::string>& tags,
                    const Symbolizer::Options& symbols, ReadReport* report) {
  // The whole message: a mapped file as it is, anything else (a pipe, gzip) gathered.
  std::string storage;
  std::string_view data;
  if (source.stable()) {
    data = source.Peek();
  } else {
    for (std::string_view chunk = source.Next(); !chunk.empty(); chunk = source.Next()) {
      if (storage.size() + chunk.size() > kMaxPprofBytes) ThrowPprofTooLarge(source.name());
      storage.append(chunk);
    }
    data = storage;
  }
  PprofProfile profile = DecodePprof(data, source.name());
  return PprofTree(profile, source.name(), tags, &symbols, report);
}

}  // namespace pf
