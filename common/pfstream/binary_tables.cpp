// The unwind tables, DWARF and addr2line names of the recording's binaries (binary_tables.h).
//
// Each is costly to make (a large debug file is inflated and indexed; a CFI table is compiled
// from .eh_frame), and each is made once per file, then remembered in every map that uses
// it. They can be made ahead: Prefetch reads the recording's build-id table (perf lists the
// binaries samples hit) and starts a thread that loads what those binaries will need, in the
// order the first samples need it: unwind tables (for stack copies), symbols (the
// symbolizer's part), then addr2line's names; and one that loads their DWARF (for inline
// frames or source lines), whose inflating of a compressed debug file is the longest job.
// Each item is a Claim shared by that thread and the one that needs it: taken if made,
// waited for if begun, else made by the needing thread itself. So prefetching only ever
// saves time, and what fails on the thread is made, and fails and is reported, where it is
// needed. Without a prefetch (or for a binary it does not know) each is made on first use.

#include "pfstream/binary_tables.h"

#include <system_error>

#include "base/error.h"
#include "base/thread_name.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"
#include "unwind/cfi.h"

namespace pf {

namespace {
// How the Session opens DWARF (as perf names functions; lines only when asked for).
DwarfInfo::Options DwarfOptions(bool srcline) {
  return {.demangle = true, .lines = srcline, .store_later = true, .keep_locations = true};
}
}  // namespace

BinaryTables::BinaryTables(ProcessMaps& maps, Symbolizer& symbolizer)
    : maps_(maps), sym_(symbolizer) {}

BinaryTables::~BinaryTables() { StopPrefetch(); }

void BinaryTables::StopPrefetch() {
  stop_prefetch_ = true;
  if (prefetch_worker_.joinable()) prefetch_worker_.join();
  if (dwarf_worker_.joinable()) dwarf_worker_.join();
}

void BinaryTables::Prefetch(const PerfDataReader& reader, bool inline_frames, bool srclines) {
  if (prefetch_worker_.joinable() || dwarf_worker_.joinable() || !binary_prefetches_.empty()) return;
  // Unwind tables for stack copies; inline frames are added to frames unwound from them only
  // (see FrameNamer::Frames): a frame-pointer recording needs DWARF for source lines alone.
  bool stack_copies = false;
  for (const EventAttr& a : reader.attrs()) stack_copies |= a.sample_stack_user != 0;
  std::vector<Binary> binaries;
  for (const PerfDataReader::BuildId& b : reader.build_ids()) {
    if (b.path.empty() || b.path[0] != '/') continue;  // the kernel, [vdso]
    binaries.push_back({b.path, maps_.BuildIdOf(reader, b.path), {}});
  }
  // Kernel symbols on a thread of their own: the first kernel frame may come at once, and
  // /proc/kallsyms takes the kernel tens of milliseconds to print.
  prefetch_plan_.kernel = KernelSampled(reader);
  if (prefetch_plan_.kernel) sym_.PrefetchKernelSymbols();
  PrefetchBinaries(std::move(binaries), stack_copies, (inline_frames && stack_copies) || srclines);
}

void BinaryTables::PrefetchBinaries(std::vector<Binary> binaries, bool unwind_tables, bool dwarf) {
  if (prefetch_worker_.joinable() || dwarf_worker_.joinable() || !binary_prefetches_.empty()) return;
  prefetch_plan_.unwind_tables = unwind_tables;
  prefetch_plan_.dwarf = dwarf;
  std::vector<BinaryPrefetch*> jobs;
  for (Binary& b : binaries) {
    Symbolizer::BinaryPrefetch* from_symbolizer = sym_.PrefetchBinary(b.path, b.build_id);
    if (from_symbolizer == nullptr) continue;
    auto prefetch = std::make_unique<BinaryPrefetch>();
    prefetch->from_symbolizer = from_symbolizer;
    prefetch->lookups = std::move(b.lookups);
    jobs.push_back(prefetch.get());
    binary_prefetches_.emplace(b.path + '\0' + b.build_id, std::move(prefetch));
  }
  prefetch_plan_.binaries = jobs.size();
  if (jobs.empty()) return;
  try {
    if (dwarf) dwarf_worker_ = std::thread([this, jobs] { RunDwarfPrefetch(jobs); });
    prefetch_worker_ = std::thread(
        [this, jobs = std::move(jobs), plan = prefetch_plan_] { RunPrefetch(jobs, plan); });
  } catch (const std::system_error&) {  // no thread to be had: each is made when needed
  }
}

// The prefetch thread: in the order the first samples need them, each sample's unwinding,
// its symbols, then its inline frames.
void BinaryTables::RunPrefetch(const std::vector<BinaryPrefetch*>& jobs, PrefetchPlan plan) {
  NameThisThread("pf-prefetch");
  // What fails here fails again, and is reported, where the main thread asks for it.
  auto each = [&](auto&& load) {
    for (BinaryPrefetch* p : jobs) {
      if (stop_prefetch_) return;
      try {
        load(*p);
      } catch (...) {
      }
    }
  };
  if (plan.unwind_tables) each([](BinaryPrefetch& p) { p.cfi.Offer([&] { return MakeCfi(p); }); });
  each([](BinaryPrefetch& p) { p.from_symbolizer->LoadSymbols(); });
  if (plan.dwarf) {
    // addr2line's names are asked for every frame of a binary without DWARF, and for few
    // of one with it (where DWARF does not place an address): left to the main thread.
    each([](BinaryPrefetch& p) {
      if (p.from_symbolizer->DebugInfoPath().empty()) p.names.Offer([&] { return MakeNames(p); });
    });
  }
}

// The DWARF thread: each binary's DWARF, in the same order, beside the thread above. A first
// run's longest job is inflating a compressed debug file (glibc's: 7 MB, 10 ms), which needs
// no symbols: begun at once, it is ready about when the first samples need it.
void BinaryTables::RunDwarfPrefetch(const std::vector<BinaryPrefetch*>& jobs) {
  NameThisThread("pf-prefetch-dw");
  for (BinaryPrefetch* p : jobs) {
    if (stop_prefetch_) return;
    try {
      p->dwarf.Offer([&] { return MakeDwarf(*p, true); });
    } catch (...) {  // made again, and reported, where it is needed
    }
  }
}

BinaryTables::BinaryPrefetch* BinaryTables::FindBinaryPrefetch(uint32_t pid, const MapEntry& m) {
  if (binary_prefetches_.empty() || !sym_.InThisFileSystem(pid)) return nullptr;
  binary_prefetch_key_.assign(m.path).push_back('\0');
  binary_prefetch_key_.append(m.build_id);
  auto it = binary_prefetches_.find(binary_prefetch_key_);
  return it == binary_prefetches_.end() ? nullptr : it->second.get();
}

bool BinaryTables::Busy(uint32_t pid, const MapEntry& m) {
  BinaryPrefetch* p = FindBinaryPrefetch(pid, m);
  return p && (p->from_symbolizer->Busy() || p->cfi.Busy() || p->dwarf.Busy() || p->names.Busy());
}

BinaryTables::BinaryPrefetch::Cfi BinaryTables::MakeCfi(BinaryPrefetch& p) {
  BinaryPrefetch::Cfi c;
  c.image = p.from_symbolizer->RuntimeImage();
  if (c.image) c.table = CfiTable::FromElf(c.image);
  return c;
}

// With `lookups` (on the DWARF thread), the answers for the binary's listed addresses are
// made too, before the DwarfInfo is handed on: the thread that names them then only reads
// them (a DwarfInfo is not thread-safe, and is this thread's alone until then).
BinaryTables::BinaryPrefetch::Dwarf BinaryTables::MakeDwarf(BinaryPrefetch& p, bool lookups) const {
  BinaryPrefetch::Dwarf d;
  d.path = p.from_symbolizer->DebugInfoPath();
  if (d.path.empty()) return d;
  d.info = DwarfInfo::Open(d.path, DwarfOptions(srcline_));
  if (!d.info) return d;
  d.info->Prepare();
  std::shared_ptr<const elf::ElfImage> image;
  if (lookups && !p.lookups.empty()) image = p.from_symbolizer->RuntimeImage();
  for (uint64_t offset : image ? p.lookups : std::vector<uint64_t>()) {
    if (stop_prefetch_) break;
    uint64_t vaddr;
    if (image->FileOffsetToVaddr(offset, &vaddr)) d.info->Lookup(vaddr);
  }
  return d;
}

// The symbol table addr2line reads for a binary: its debug file's when there is one (as perf
// hands addr2line the file it read symbols from), else the binary's when that is a file (not
// the vdso). Path "" when there is none; the names are not built yet.
template <typename RuntimeImage>
BinaryTables::BinaryPrefetch::Names BinaryTables::NamesFile(std::string debug_path,
                                                            RuntimeImage runtime_image) {
  BinaryPrefetch::Names n;
  n.path = std::move(debug_path);
  if (n.path.empty()) {
    n.entry.image = runtime_image();
    const elf::ElfImage* image = n.entry.image.get();
    if (!image || image->path().empty() || image->path()[0] != '/') return {};
    n.path = image->path();
  }
  return n;
}

void BinaryTables::BuildNames(BinaryPrefetch::Names& n) {
  if (!n.entry.image) n.entry.image = elf::ElfImage::Open(n.path);
  n.entry.names = Addr2lineNames::Load(*n.entry.image, n.path);
}

BinaryTables::BinaryPrefetch::Names BinaryTables::MakeNames(BinaryPrefetch& p) {
  BinaryPrefetch::Names n = NamesFile(p.from_symbolizer->DebugInfoPath(),
                                      [&p] { return p.from_symbolizer->RuntimeImage(); });
  if (!n.path.empty()) BuildNames(n);
  return n;
}

CfiTable* BinaryTables::CfiFor(uint32_t pid, MapEntry& m) {
  if (m.cfi_loaded) return m.cfi;
  m.cfi_loaded = true;
  if (Symbolizer::UsesPerfMap(m.path)) return nullptr;  // JIT code: no CFI
  std::shared_ptr<const elf::ElfImage> image = sym_.RuntimeImage(m.path, m.build_id, pid);
  if (!image) return nullptr;
  auto& table = cfi_tables_[image.get()];
  if (!table) {
    if (BinaryPrefetch* p = FindBinaryPrefetch(pid, m)) {
      BinaryPrefetch::Cfi& c = p->cfi.Get([p] { return MakeCfi(*p); });
      if (c.image == image) table = std::move(c.table);
    }
    if (!table) table = CfiTable::FromElf(image);
  }
  m.cfi = table.get();
  return m.cfi;
}

DwarfInfo* BinaryTables::DwarfFor(uint32_t pid, MapEntry& m) {
  if (m.dwarf_loaded) return m.dwarf;
  m.dwarf_loaded = true;
  if (BinaryPrefetch* p = FindBinaryPrefetch(pid, m)) {
    BinaryPrefetch::Dwarf& d = p->dwarf.Get([this, p] { return MakeDwarf(*p, false); });
    if (d.info && !dwarf_[d.path]) dwarf_[d.path] = std::move(d.info);
  }
  std::string path = sym_.DebugInfoPath(m.path, m.build_id, pid);
  if (path.empty()) return nullptr;
  auto& info = dwarf_[path];
  if (!info) {
    info = DwarfInfo::Open(path, DwarfOptions(srcline_));
  }
  m.dwarf = info.get();
  return m.dwarf;
}

Addr2lineNames* BinaryTables::NamesFor(uint32_t pid, MapEntry& m) {
  if (m.names_loaded) return m.names;
  m.names_loaded = true;
  if (m.path.empty() || m.path[0] == '[') return nullptr;  // perf asks nothing about [vdso]
  if (BinaryPrefetch* p = FindBinaryPrefetch(pid, m)) {
    try {
      BinaryPrefetch::Names& n = p->names.Get([p] { return MakeNames(*p); });
      if (n.entry.names && !names_[n.path].names) names_[n.path] = std::move(n.entry);
    } catch (const Error&) {  // tried again below, as it would be without the prefetch
    }
  }
  BinaryPrefetch::Names n = NamesFile(sym_.DebugInfoPath(m.path, m.build_id, pid),
                                      [&] { return sym_.RuntimeImage(m.path, m.build_id, pid); });
  if (n.path.empty()) return nullptr;
  NamesEntry& e = names_[n.path];
  if (!e.names) {
    try {
      BuildNames(n);
    } catch (const Error&) {
      return nullptr;
    }
    e = std::move(n.entry);
  }
  m.names = e.names.get();
  return m.names;
}

}  // namespace pf
