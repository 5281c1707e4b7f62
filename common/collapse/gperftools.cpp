// Naming a gperftools profile's addresses and folding its stacks (gperftools.h).
//
// The profile's maps text becomes the maps of one process in a ProcessMaps, and its addresses
// are named by the FrameNamer a recording's frames are named by: the same symbol tables,
// debug files (found by the binaries' own build-ids and debug links), --symfs, and the
// functions DWARF says are inlined at an address, each a frame of its own (as the user
// frames of a recording unwound from stack copies). Each distinct address is named once; the
// names are the ones stackcollapse-perf.pl would give perf's frames (NameFrame: arguments
// dropped, an address without a symbol shown as "[BINARY]", --inline's _[i], --addrs).
//
// A profile made on another machine names binaries this one may not have (the seed guide's
// "Local symbolization failed for libc-2.31.so ... no such file"). Their frames are shown
// as "[libc-2.31.so]", and one warning lists the missing files, how many samples have frames
// in them, and where to copy them for --symfs.

#include "collapse/gperftools.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "base/diagnostics.h"
#include "base/error.h"
#include "formats/frame_names.h"
#include "formats/gperftools.h"
#include "pfstream/binary_tables.h"
#include "pfstream/frame_namer.h"
#include "pfstream/process_maps.h"

namespace pf {

namespace {

constexpr uint32_t kPid = 0;  // the profiled process (0: never looked up under /proc)


bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Names addresses as frames, root-first within each address's inline chain.
class AddressNamer {
 public:
  AddressNamer(const GperftoolsProfile& profile, const Symbolizer::Options& symbols,
               const PerfScriptOptions& perf, StackTree* tree)
      : sym_(symbols), tables_(maps_, sym_), namer_(maps_, tables_, sym_), perf_(perf),
        tree_(tree) {
    namer_.SetInline(perf.inline_frames);
    for (const GperftoolsProfile::Mapping& m : profile.mappings) {
      if (!m.path.empty()) maps_.AddUserMap(kPid, m.start, m.limit, m.offset, m.path, "");
    }
    Prefetch(profile, perf.inline_frames);
  }

  /// The frames of `addr`, root-first.
  std::span<const StrId> Frames(uint64_t addr) {
    auto [it, fresh] = at_.try_emplace(addr);
    if (fresh) it->second = Name(addr);
    return std::span<const StrId>(ids_).subspan(it->second.first, it->second.second);
  }

  /// Whether `addr` lies in a mapping whose binary gave no symbols (after Frames(addr)).
  bool Unnamed(uint64_t addr) {
    const MapEntry* m = maps_.FindUser(kPid, addr);
    return m && m->binary_loaded && (m->binary == nullptr || m->binary->symbols == nullptr);
  }

  /// The paths of the mappings whose binaries gave no symbols, split by whether the file is
  /// there (under --symfs) at all.
  void Unusable(std::vector<std::string>* missing, std::vector<std::string>* unreadable) {
    const MapTable* maps = maps_.MapsOf(kPid);
    if (!maps) return;
    for (const auto& [start, m] : *maps) {
      if (!m.binary_loaded || (m.binary && m.binary->symbols)) continue;
      std::string path(m.path);
      if (path.empty() || path.front() == '[') continue;
      auto& list = IsFile(sym_.options().symfs + path) ? *unreadable : *missing;
      if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
    }
  }

 private:
  // Starts loading, on other threads, the symbols and DWARF of the binaries the samples hit,
  // in the order the fold first needs them: on a first run (nothing in the cache on disk)
  // reading them is most of the time. Notes each binary's distinct addresses for NameAhead.
  void Prefetch(const GperftoolsProfile& profile, bool inline_frames) {
    std::unordered_set<uint64_t> seen;
    std::unordered_map<std::string_view, size_t> group_of;
    for (const GperftoolsProfile::Stack& st : profile.stacks) {
      for (uint32_t i = st.depth; i-- > 0;) {
        const uint64_t addr = profile.addresses[st.first + i];
        if (!seen.insert(addr).second) continue;
        const MapEntry* m = maps_.FindUser(kPid, addr);
        if (m == nullptr || m->path.empty() || m->path.front() != '/') continue;
        auto [it, fresh] = group_of.try_emplace(m->path, groups_.size());
        if (fresh) groups_.push_back({m, {}});
        groups_[it->second].addresses.push_back(addr);
      }
    }
    // The DWARF thread looks up each binary's addresses (as file offsets) ahead of NameAhead.
    std::vector<BinaryTables::Binary> binaries;
    for (const Group& g : groups_) {
      std::vector<uint64_t> offsets;
      if (inline_frames) {
        for (uint64_t addr : g.addresses) offsets.push_back(addr - g.map->start + g.map->pgoff);
      }
      binaries.push_back({std::string(g.map->path), std::string(), std::move(offsets)});
    }
    tables_.PrefetchBinaries(std::move(binaries), false, inline_frames);
  }

 public:
  /// Names every sampled address ahead of the fold, a binary at a time, taking first the
  /// binaries no prefetch thread is loading just then: while glibc's debug file is inflated,
  /// libpython's addresses are named. Within a binary the addresses are asked in the fold's
  /// order, the one addr2line's answers depend on (FrameNamer::NameWithoutLinkage); the fold
  /// then takes the frames the namer keeps, and interns them in its own order.
  void NameAhead() {
    std::deque<size_t> queue;
    for (size_t g = 0; g < groups_.size(); ++g) queue.push_back(g);
    size_t skipped = 0;  // in a row: when every binary left is busy, wait for the first
    while (!queue.empty()) {
      const size_t g = queue.front();
      queue.pop_front();
      if (skipped < queue.size() + 1 && tables_.Busy(kPid, *groups_[g].map)) {
        queue.push_back(g);
        ++skipped;
        continue;
      }
      skipped = 0;
      for (uint64_t addr : groups_[g].addresses) {
        frames_.clear();
        namer_.UserFrames(kPid, addr, &frames_);
      }
    }
  }

 private:
  // A binary's distinct sampled addresses, in the order the fold first asks for them.
  struct Group {
    const MapEntry* map;
    std::vector<uint64_t> addresses;
  };
  std::vector<Group> groups_;

  std::pair<uint32_t, uint32_t> Name(uint64_t addr) {
    frames_.clear();
    namer_.UserFrames(kPid, addr, &frames_);
    uint32_t first = static_cast<uint32_t>(ids_.size());
    // The namer lists the inlined functions first (innermost), the frame's own function last.
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
      char pc[24];
      ScriptFrame frame;
      frame.pc = std::string_view(pc, std::to_chars(pc, pc + sizeof pc, f->addr, 16).ptr - pc);
      frame.name = f->has_sym ? f->sym : StripOffset(f->sym);
      frame.dso = f->inlined ? std::string_view("inlined") : f->dso;
      NameFrame(frame, perf_, false, &names_);
      for (size_t i = 0; i < names_.count; ++i) {
        ids_.push_back(tree_->names().Intern(names_.names[i]));
      }
    }
    return {first, static_cast<uint32_t>(ids_.size() - first)};
  }

  ProcessMaps maps_;
  Symbolizer sym_;
  BinaryTables tables_;
  FrameNamer namer_;
  const PerfScriptOptions& perf_;
  StackTree* tree_;
  std::vector<ResolvedFrame> frames_;
  FrameNames names_;
  std::vector<StrId> ids_;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> at_;  // range of ids_
};

// "a, b and 3 more".
std::string ListPaths(const std::vector<std::string>& paths) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < paths.size() && i < kShown; ++i) out += (i ? ", " : "") + paths[i];
  if (paths.size() > kShown) out += " and " + std::to_string(paths.size() - kShown) + " more";
  return out;
}

// The warning that says which binaries were not found, what they left unnamed, and how to
// give them to pf.
void TellUnusable(const std::string& name, const std::vector<std::string>& missing,
                  const std::vector<std::string>& unreadable, uint64_t unnamed, uint64_t total,
                  const char* what, const std::string& symfs, ReadReport* report) {
  std::string counted = std::to_string(unnamed) + " of " + std::to_string(total) + " " + what +
                        (total == 1 ? "" : "s");
  if (!missing.empty()) {
    const bool one = missing.size() == 1;
    const std::string& first = missing.front();
    std::string shown = "[";
    shown.append(first, first.rfind('/') + 1);
    shown += one ? "]" : "] and so on";
    std::string where = symfs.empty() ? std::string("on this machine") : "under --symfs " + symfs;
    std::string dir = symfs.empty() ? std::string("DIR") : symfs;
    report->warnings.push_back(
        name + ": " + Plural(missing.size(), "binary", "binaries") + " the profile's maps name " +
        (one ? "is" : "are") + " not " + where + ": " + ListPaths(missing) + "; " + counted +
        " have frames in " + (one ? "it" : "them") + ", shown as " + shown + ". Copy " +
        (one ? "it" : "them") + " from the machine that made the profile to the same path" +
        (one ? "" : "s") + " under a directory (" + dir + first + ") and give --symfs=" + dir);
  }
  if (!unreadable.empty()) {
    report->warnings.push_back(name + ": " + ListPaths(unreadable) +
                               (unreadable.size() == 1 ? " has" : " have") +
                               " no symbols pf can read (stripped? install the debug files, "
                               "or copy the unstripped files under --symfs); " +
                               (missing.empty() ? counted + " have frames in them" : "their frames are shown as [FILE]"));
  }
}

}  // namespace

StackTree ReadGperftools(InputFormat format, ByteSource& source, const ProfileOptions& options,
                         const Symbolizer::Options& symbols, ReadReport* report) {
  // Parse: the stacks as addresses, the values, the maps.
  std::string storage;
  const bool cpu = format == InputFormat::kGperftoolsCpu;
  std::string_view data = GatherGperftoolsBytes(source, cpu, &storage);
  GperftoolsProfile profile = cpu ? ParseGperftoolsCpu(data, source.name(), report)
                                  : ParseGperftoolsHeap(data, source.name(), report);
  StackTree tree(profile.types);
  const PerfScriptOptions default_perf;
  AddressNamer namer(profile, symbols, options.perf ? *options.perf : default_perf, &tree);
  namer.NameAhead();
  // Fold: each stack root-first, each address named once.
  const size_t columns = profile.types.size();
  std::vector<StrId> path;
  uint64_t unnamed = 0, total = 0;
  for (size_t s = 0; s < profile.stacks.size(); ++s) {
    const GperftoolsProfile::Stack& st = profile.stacks[s];
    const uint64_t* values = profile.values.data() + s * columns;
    path.clear();
    bool missing = false;
    for (uint32_t i = st.depth; i-- > 0;) {
      uint64_t addr = profile.addresses[st.first + i];
      std::span<const StrId> frames = namer.Frames(addr);
      path.insert(path.end(), frames.begin(), frames.end());
      missing = missing || namer.Unnamed(addr);
    }
    // Samples (CPU) or stacks (heap) with frames in binaries without symbols.
    uint64_t weight = cpu ? values[0] : 1;
    total += weight;
    if (missing) unnamed += weight;
    NodeId leaf{};
    bool added = false;
    for (size_t c = 0; c < columns; ++c) {
      if (values[c] == 0) continue;
      if (!added) {
        leaf = tree.AddStack(path, values[c], static_cast<int>(c));
        added = true;
      } else {
        tree.AddSelf(leaf, values[c], static_cast<int>(c));
      }
    }
  }
  if (cpu) report->samples += total;
  std::vector<std::string> missing, unreadable;
  namer.Unusable(&missing, &unreadable);
  if (unnamed) {
    TellUnusable(source.name(), missing, unreadable, unnamed, total, cpu ? "sample" : "stack",
                 symbols.symfs, report);
  }
  return tree;
}

std::string_view GatherGperftoolsBytes(ByteSource& source, bool cpu, std::string* storage,
                                       uint64_t cap) {
  if (source.stable()) return source.Next();
  constexpr size_t kHead = 4096;
  bool checked = false;
  for (std::string_view chunk = source.Next(); !chunk.empty(); chunk = source.Next()) {
    if (storage->size() + chunk.size() > cap) {
      std::string size = cap % (uint64_t{1} << 30) == 0 ? std::to_string(cap >> 30) + " GiB"
                                                          : std::to_string(cap) + " bytes";
      throw Error(source.name(), "more than " + size + " once decompressed: pf reads no more of a " +
                                     std::string(cpu ? "CPU" : "heap") +
                                     " profile (a gzip bomb?)");
    }
    storage->append(chunk);
    if (!checked && storage->size() >= kHead) {
      checked = true;
      std::string_view head(storage->data(), kHead);
      // The parsers throw, saying what is wrong.
      ReadReport ignored;
      if (cpu && !IsGperftoolsCpu(head)) ParseGperftoolsCpu(head, source.name(), &ignored);
      if (!cpu && !IsGperftoolsHeap(head)) ParseGperftoolsHeap(head, source.name(), &ignored);
    }
  }
  return *storage;
}

}  // namespace pf
