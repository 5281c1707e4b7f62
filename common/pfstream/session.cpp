// Replaying a recording's threads and maps to name its samples (session.h). Processes are kept
// by pid with their comm per thread and their maps in an ordered table, updated by COMM, FORK,
// EXIT and MMAP/MMAP2 records as perf updates them, so a sample is named with the maps of its
// moment. A sample's call chain comes from the recorded one or, for a sample with a stack
// copy, from the unwinder (unwind/); each frame is then resolved to its binary and symbol
// through the Symbolizer, with inline frames and source lines from DWARF when asked. What the
// binaries will need (unwind tables, symbols, DWARF) can be loaded ahead on a helper thread
// (Prefetch); each is taken from there when first needed, or made here if the helper has not
// begun it, so prefetching only ever saves time.

#include "pfstream/session.h"

#include "base/thread_name.h"
#include "pfstream/records.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"
#include "unwind/cfi.h"
#include "unwind/libdw_unwinder.h"
#include "unwind/unwinder.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace pf {

namespace {
constexpr uint16_t kCpuModeMask = 7;
constexpr uint16_t kCpuModeKernel = 1;
constexpr uint16_t kCpuModeGuestKernel = 4;
constexpr uint32_t kKernelPid = 0xffffffffu;

// "[nf_conntrack]" or "/lib/modules/.../nf_conntrack.ko" -> "nf_conntrack" (perf shows
// modules as "[name]").
std::string ModuleName(std::string_view path) {
  if (!path.empty() && path.front() == '[' && path.back() == ']') {
    return std::string(path.substr(1, path.size() - 2));
  }
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = base.find(".ko");
  if (dot != std::string_view::npos) base = base.substr(0, dot);
  std::string name(base);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// How a Session opens DWARF (as perf names functions; lines only when asked for).
DwarfInfo::Options DwarfOptions(bool srcline) {
  return {.demangle = true, .lines = srcline, .store_later = true, .keep_locations = true};
}

}  // namespace

struct Session::Process {
  // Shared with the processes forked from it until one of them maps something (copy on
  // write): a shell's thousands of subshells cost no copies.
  explicit Process(std::pmr::memory_resource* nodes) : maps(std::make_shared<MapTable>(nodes)) {}
  std::shared_ptr<MapTable> maps;
  MapTable& OwnMaps() {
    if (maps.use_count() > 1) {
      maps = std::make_shared<MapTable>(*maps, maps->get_allocator().resource());
    }
    return *maps;
  }
  uint64_t generation = 0;  // Session-wide serial of the maps' last change (0: none)
  // Its live threads, known from the FORK that made it on; none for a process that ran
  // before the recording (not all its threads are known). A thread's EXIT counts only when
  // its FORK did, so a lost FORK record cannot make a process look finished.
  std::vector<uint32_t> threads;  // (few: a search is cheaper than a set's allocations)
  // The maps as libdw is given them, for generation libdw_generation - 1.
  std::vector<LibdwMap> libdw_maps;
  uint64_t libdw_generation = 0;
};

Session::Session(Symbolizer& symbolizer) : sym_(symbolizer) {}
Session::~Session() {
  StopPrefetch();
  for (auto& [image, fd] : memory_files_) close(fd);
}

void Session::StopPrefetch() {
  stop_prefetch_ = true;
  if (prefetch_worker_.joinable()) prefetch_worker_.join();
}

void Session::Prefetch(const PerfDataReader& reader) {
  if (prefetch_worker_.joinable() || !binary_prefetches_.empty()) return;
  // Unwind tables for stack copies; inline frames are added to frames unwound from them only
  // (see Frames): a frame-pointer recording needs DWARF for source lines alone.
  bool stack_copies = false;
  for (const EventAttr& a : reader.attrs()) stack_copies |= a.sample_stack_user != 0;
  prefetch_plan_.unwind_tables = stack_copies;
  prefetch_plan_.dwarf = (inline_ && stack_copies) || srcline_;
  std::vector<BinaryPrefetch*> jobs;
  for (const PerfDataReader::BuildId& b : reader.build_ids()) {
    if (b.path.empty() || b.path[0] != '/') continue;  // the kernel, [vdso]
    std::string id = BuildIdOf(reader, b.path);
    Symbolizer::BinaryPrefetch* from_symbolizer = sym_.PrefetchBinary(b.path, id);
    if (from_symbolizer == nullptr) continue;
    auto prefetch = std::make_unique<BinaryPrefetch>();
    prefetch->from_symbolizer = from_symbolizer;
    jobs.push_back(prefetch.get());
    binary_prefetches_.emplace(b.path + '\0' + id, std::move(prefetch));
  }
  prefetch_plan_.binaries = jobs.size();
  // Kernel symbols on a thread of their own: the first kernel frame may come at once, and
  // /proc/kallsyms takes the kernel tens of milliseconds to print.
  prefetch_plan_.kernel = KernelSampled(reader);
  if (prefetch_plan_.kernel) sym_.PrefetchKernelSymbols();
  if (jobs.empty()) return;
  // In the order the first samples need them: each sample's unwinding, its symbols, then
  // its inline frames.
  auto work = [this, jobs = std::move(jobs), plan = prefetch_plan_] {
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
    if (plan.unwind_tables)
      each([](BinaryPrefetch& p) { p.cfi.Offer([&] { return MakeCfi(p); }); });
    each([](BinaryPrefetch& p) { p.from_symbolizer->LoadSymbols(); });
    if (plan.dwarf) {
      each([this](BinaryPrefetch& p) { p.dwarf.Offer([&] { return MakeDwarf(p); }); });
      // addr2line's names are asked for every frame of a binary without DWARF, and for few
      // of one with it (where DWARF does not place an address): left to the main thread.
      each([](BinaryPrefetch& p) {
        if (p.from_symbolizer->DebugInfoPath().empty()) p.names.Offer([&] { return MakeNames(p); });
      });
    }
  };
  try {
    prefetch_worker_ = std::thread(std::move(work));
  } catch (const std::system_error&) {  // no thread to be had: each is made when needed
  }
}

Session::BinaryPrefetch* Session::FindBinaryPrefetch(uint32_t pid, const MapEntry& m) {
  if (binary_prefetches_.empty() || !sym_.InThisFileSystem(pid)) return nullptr;
  binary_prefetch_key_.assign(m.path).push_back('\0');
  binary_prefetch_key_.append(m.build_id);
  auto it = binary_prefetches_.find(binary_prefetch_key_);
  return it == binary_prefetches_.end() ? nullptr : it->second.get();
}

Session::BinaryPrefetch::Cfi Session::MakeCfi(BinaryPrefetch& p) {
  BinaryPrefetch::Cfi c;
  c.image = p.from_symbolizer->RuntimeImage();
  if (c.image) c.table = CfiTable::FromElf(c.image);
  return c;
}

Session::BinaryPrefetch::Dwarf Session::MakeDwarf(BinaryPrefetch& p) const {
  BinaryPrefetch::Dwarf d;
  d.path = p.from_symbolizer->DebugInfoPath();
  if (!d.path.empty()) {
    d.info = DwarfInfo::Open(d.path, DwarfOptions(srcline_));
    if (d.info) d.info->Prepare();
  }
  return d;
}

// The symbol table addr2line reads for a binary: its debug file's when there is one (as perf
// hands addr2line the file it read symbols from), else the binary's when that is a file (not
// the vdso). Path "" when there is none; the names are not built yet.
template <typename RuntimeImage>
Session::BinaryPrefetch::Names Session::NamesFile(std::string debug_path,
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

void Session::BuildNames(BinaryPrefetch::Names& n) {
  if (!n.entry.image) n.entry.image = elf::ElfImage::Open(n.path);
  n.entry.names = Addr2lineNames::Load(*n.entry.image, n.path);
}

Session::BinaryPrefetch::Names Session::MakeNames(BinaryPrefetch& p) {
  BinaryPrefetch::Names n = NamesFile(p.from_symbolizer->DebugInfoPath(),
                                      [&p] { return p.from_symbolizer->RuntimeImage(); });
  if (!n.path.empty()) BuildNames(n);
  return n;
}

// Nodes of one size (a map table's) on a free list, carved from blocks of 64 KiB; any other
// size from the heap.
void* Session::NodePool::do_allocate(size_t bytes, size_t align) {
  const size_t size = (bytes + 15) & ~size_t{15};
  if (node_ == 0 && align <= 16 && size <= 4096) node_ = size;
  if (size != node_ || align > 16) {
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  if (free_) {
    void* p = free_;
    free_ = *static_cast<void**>(p);
    return p;
  }
  if (left_ < size) {
    constexpr size_t kBlock = size_t{64} << 10;
    blocks_.emplace_back(new char[kBlock]);
    next_ = blocks_.back().get();
    left_ = kBlock;
  }
  void* p = next_;
  next_ += size;
  left_ -= size;
  return p;
}

void Session::NodePool::do_deallocate(void* p, size_t bytes, size_t align) {
  const size_t size = (bytes + 15) & ~size_t{15};
  if (size != node_ || align > 16) {
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
    return;
  }
  *static_cast<void**>(p) = free_;
  free_ = p;
}

Session::Process& Session::Proc(uint32_t pid) {
  auto& p = procs_[pid];
  if (!p) p = std::make_unique<Process>(&map_nodes_);
  return *p;
}

void Session::AddMap(MapTable& maps, MapEntry m) {
  if (m.end <= m.start) return;
  // The maps the new one overlaps are one run: from the last starting before it (if it
  // reaches into it) to the last starting before its end.
  auto first = maps.lower_bound(m.start);
  if (first != maps.begin() && std::prev(first)->second.end > m.start) --first;
  auto last = first;
  while (last != maps.end() && last->second.start < m.end) ++last;
  // Keep the parts of the old maps the new one does not cover.
  std::optional<MapEntry> left, right;
  if (first != last && first->second.start < m.start) {
    left = first->second;
    left->end = m.start;
  }
  if (first != last && std::prev(last)->second.end > m.end) {
    right = std::prev(last)->second;
    right->pgoff += m.end - right->start;
    right->start = m.end;
  }
  maps.erase(first, last);
  if (left) {
    left->serial = ++map_serial_;
    maps.emplace(left->start, std::move(*left));
  }
  if (right) {
    right->serial = ++map_serial_;
    maps.emplace(right->start, std::move(*right));
  }
  m.serial = ++map_serial_;
  uint64_t start = m.start;
  maps.emplace(start, std::move(m));
}

const MapEntry* Session::FindMap(const MapTable& maps, uint64_t ip) const {
  auto it = maps.upper_bound(ip);
  if (it == maps.begin()) return nullptr;
  --it;
  return ip < it->second.end ? &it->second : nullptr;
}

// The build-id perf recorded for a file (the BUILD_ID feature or HEADER_BUILD_ID records),
// as hex, so the file's copy in the build-id cache is used even if the file changed since.
std::string Session::BuildIdOf(const PerfDataReader& reader, const std::string& path) {
  if (build_ids_seen_ != reader.build_ids().size()) {
    for (size_t i = build_ids_seen_; i < reader.build_ids().size(); ++i) {
      const auto& b = reader.build_ids()[i];
      build_id_by_path_[b.path] = elf::Hex(b.id);
    }
    build_ids_seen_ = reader.build_ids().size();
  }
  auto it = build_id_by_path_.find(path);
  return it == build_id_by_path_.end() ? std::string() : it->second;
}

void Session::OnRecord(const PerfDataReader& reader, const Record& r) {
  switch (r.type) {
    case kRecordComm: {
      CommRecord c;
      if (!ParseComm(r, &c)) return;
      comms_[c.tid] = std::string(c.comm);
      if (c.pid != c.tid && !comms_.count(c.pid)) comms_[c.pid] = comms_[c.tid];
      return;
    }
    case kRecordFork: {
      ForkRecord f;
      if (!ParseFork(r, &f)) return;
      const uint32_t pid = f.pid, ppid = f.ppid, tid = f.tid, ptid = f.ptid;
      auto parent_comm = comms_.find(ptid);
      if (parent_comm != comms_.end()) comms_[tid] = parent_comm->second;
      // A new process starts with its parent's maps, except for the FORK records perf
      // synthesizes for processes that already ran (PERF_RECORD_MISC_FORK_EXEC): their own
      // maps follow, and a clone would leave stale ones beside them.
      constexpr uint16_t kMiscForkExec = 1 << 13;
      if (pid != ppid && !(r.misc & kMiscForkExec)) {
        auto parent = procs_.find(ppid);
        if (parent != procs_.end()) {
          Process& child = Proc(pid);
          child.maps = parent->second->maps;
          child.generation = ++generation_serial_;
          child.threads = {tid};
        }
      } else if (pid == ppid && tid != ptid && !(r.misc & kMiscForkExec)) {
        auto p = procs_.find(pid);
        if (p != procs_.end() && !p->second->threads.empty()) p->second->threads.push_back(tid);
      }
      return;
    }
    case kRecordExit: {
      // A process whose every thread has exited is forgotten (with ForgetExited): a shell
      // script's thousands of short-lived commands do not keep their maps.
      ForkRecord e;
      if (!forget_exited_ || !ParseFork(r, &e)) return;
      const uint32_t pid = e.pid, tid = e.tid;
      auto p = procs_.find(pid);
      if (p == procs_.end()) return;
      std::vector<uint32_t>& live = p->second->threads;
      auto t = std::find(live.begin(), live.end(), tid);
      if (t == live.end()) return;
      live.erase(t);
      if (live.empty()) procs_.erase(p);
      return;
    }
    case kRecordHeaderBuildId: {  // (delivered in file mode: perf inject -b)
      PerfDataReader::BuildId id;
      if (ParseBuildIdRecord(r, &id)) build_id_by_path_[id.path] = elf::Hex(id.id);
      return;
    }
    case kRecordMmap:
    case kRecordMmap2: {
      MmapRecord mm;
      if (!ParseMmap(r, &mm)) return;
      const uint32_t pid = mm.pid;
      MapEntry m{mm.start, mm.start + mm.len, mm.pgoff, {}, {}};
      std::string build_id = mm.has_build_id ? elf::Hex(mm.build_id) : std::string();
      std::string path(mm.filename);
      if (build_id.empty()) build_id = BuildIdOf(reader, path);
      uint16_t mode = r.misc & kCpuModeMask;
      const bool kernel =
          pid == kKernelPid || mode == kCpuModeKernel || mode == kCpuModeGuestKernel;
      // perf names the kernel image "[kernel.kallsyms]" (its map is "..._text").
      if (kernel && path.rfind("[kernel.kallsyms]", 0) == 0) path = "[kernel.kallsyms]";
      m.path = Intern(path);
      m.build_id = Intern(build_id);
      if (kernel) {
        AddMap(kernel_maps_, std::move(m));
        ++kernel_generation_;
      } else {
        Process& p = Proc(pid);
        AddMap(p.OwnMaps(), std::move(m));
        p.generation = ++generation_serial_;
      }
      return;
    }
    default:
      return;
  }
}

const MapTable* Session::MapsOf(uint32_t pid) const {
  auto it = procs_.find(pid);
  return it == procs_.end() ? nullptr : it->second->maps.get();
}

uint64_t Session::MapsGeneration(uint32_t pid) const {
  auto it = procs_.find(pid);
  uint64_t own = it == procs_.end() ? 0 : it->second->generation;
  return (kernel_generation_ << 32) ^ own;
}

std::string_view Session::Comm(uint32_t pid, uint32_t tid) {
  (void)pid;
  if (comm_ != nullptr && tid == comm_tid_) return *comm_;
  auto it = comms_.find(tid);
  if (it == comms_.end()) {
    // perf names the idle thread (tid 0) "swapper", and others it never saw ":TID".
    std::string name = tid == 0 ? "swapper" : std::to_string(tid);
    if (tid != 0) name.insert(name.begin(), ':');
    it = comms_.emplace(tid, std::move(name)).first;
  }
  comm_tid_ = tid;
  comm_ = &it->second;
  return it->second;
}

ResolvedFrame Session::Resolve(uint32_t pid, uint64_t ip, bool kernel, MapEntry** map) {
  if (map) *map = nullptr;
  ResolvedFrame f;
  f.kernel = kernel;
  f.addr = ip;
  f.sym = "[unknown]";
  f.dso = "[unknown]";
  if (kernel) {
    // As perf: the kernel image's map reaches as far as kallsyms does, so any address may
    // be named from it; a module's symbol is named only when the recording maps that module
    // (its dso is then "[module]"); otherwise the frame is [unknown] ([unknown]).
    const MapEntry* km = FindMap(kernel_maps_, ip);
    bool module_map = km && km->path != "[kernel.kallsyms]";
    Symbol s = sym_.LookupKernel(ip);
    if (!s.found || (!s.module.empty() && !module_map)) return f;
    if (module_map) {
      std::string name = ModuleName(km->path);
      name.insert(name.begin(), '[');
      name += ']';
      f.dso = Intern(name);
    } else {
      f.dso = "[kernel.kallsyms]";
    }
    f.sym = s.name;
    f.symoff = s.offset;
    f.has_sym = true;
    return f;
  }
  auto p = procs_.find(pid);
  MapEntry* m = p == procs_.end() ? nullptr : const_cast<MapEntry*>(FindMap(*p->second->maps, ip));
  if (!m) return f;
  if (map) *map = m;
  if (Symbolizer::UsesPerfMap(m->path)) {  // JIT code: named by /tmp/perf-PID.map
    f.dso = Intern(Symbolizer::PerfMapPath(pid));
    Symbol s = sym_.LookupJit(pid, ip, m->start);
    if (s.found) {
      f.sym = s.name;
      f.symoff = s.offset;
      f.has_sym = true;
    }
    return f;
  }
  f.dso = m->path;
  uint64_t off = ip - m->start + m->pgoff;
  f.addr = off;
  if (!m->binary_loaded) {
    m->binary = sym_.BinaryOf(m->path, m->build_id, pid);
    m->binary_loaded = true;
  }
  Symbol s = sym_.LookupIn(m->binary, m->path, off);
  if (s.found) {
    f.sym = s.name;
    f.symoff = s.offset;
    f.has_sym = true;
  }
  return f;
}

// The modules of one process, for the unwinder.
class Session::Modules : public ModuleLookup {
 public:
  // `generation`: the maps' (Process::generation; 0 for maps not to be remembered by).
  Modules(Session& session, uint32_t pid, MapTable& maps, uint64_t generation)
      : session_(session), pid_(pid), maps_(maps), generation_(generation) {}
  // Return addresses repeat from sample to sample: each (maps, pc) is looked up once, and
  // then found in a small direct-mapped table (Session::RowCache).
  Row FindRow(uint64_t ip, UnwindModule* module, CfiRow* row) override {
    if (generation_ == 0) return ModuleLookup::FindRow(ip, module, row);
    RowCache::Entry& e = session_.row_cache_.At(generation_, ip);
    if (e.pc == ip && e.generation == generation_) {
      *module = e.module;
      *row = e.row;
      return Row::kFound;
    }
    Row found = ModuleLookup::FindRow(ip, module, row);
    if (found == Row::kFound) e = {generation_, ip, *module, *row};
    return found;
  }
  bool Find(uint64_t ip, UnwindModule* module) override {
    MapEntry* it = const_cast<MapEntry*>(session_.FindMap(maps_, ip));
    if (it == nullptr) return false;
    CfiTable* cfi = session_.CfiFor(pid_, *it);
    uint64_t vaddr;
    if (cfi == nullptr || !cfi->FileOffsetToVaddr(ip - it->start + it->pgoff, &vaddr)) {
      return false;
    }
    module->cfi = cfi;
    module->bias = ip - vaddr;
    return true;
  }

 private:
  Session& session_;
  uint32_t pid_;
  MapTable& maps_;
  uint64_t generation_;
};

CfiTable* Session::CfiFor(uint32_t pid, MapEntry& m) {
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

// The part of Callchain before the unwinding: the recorded chain when the sample has no
// stack copy to unwind (false), else the kernel part and the user mark in `scratch`, and the
// stack.
bool Session::StartCallchain(const Sample& s, std::vector<uint64_t>* scratch, UserStack* stack,
                             std::span<const uint64_t>* chain) {
  constexpr uint64_t kSampleRegsUser = 1 << 12, kSampleStackUser = 1 << 13;
  if (!s.attr || (s.attr->sample_type & (kSampleRegsUser | kSampleStackUser)) !=
                     (kSampleRegsUser | kSampleStackUser)) {
    *chain = s.callchain;
    return false;
  }
  // The kernel part of the recorded chain (perf records no user part with a stack copy).
  scratch->clear();
  for (uint64_t ip : s.callchain) {
    if (ip == kContextUser) break;
    scratch->push_back(ip);
  }
  *stack = UserStack{s.regs_abi, s.attr->sample_regs_user, s.regs_user, s.stack_user};
  // As perf: no user frames, not even the sampled pc, when the kernel copied no stack (a
  // fault in execve after the old image is gone samples the old registers).
  if (stack->regs.empty() || stack->stack.empty()) {
    *chain = *scratch;
    return false;
  }
  scratch->push_back(kContextUser);
  return true;
}

Session::Modules Session::ModulesOf(uint32_t pid) {
  auto p = procs_.find(pid);
  if (p == procs_.end()) return Modules(*this, pid, no_maps_, 0);
  return Modules(*this, pid, *p->second->maps, p->second->generation);
}

// The part of Callchain after the table unwinder: libdw where it could not go on, and the
// mark of a cut stack.
void Session::FinishCallchain(const Sample& s, const UserStack& stack, Modules& modules,
                              size_t user_at, UnwindEnd end, std::vector<uint64_t>* scratch) {
  if (end == UnwindEnd::kUnsupported) {
    // A rule the tables cannot express (or libdw was asked for): libdw from the start.
    if (unwind_method_ == UnwindMethod::kTable) ++libdw_fallbacks_;
    scratch->resize(user_at);
    end = UnwindWithLibdw(s, stack, user_at + kMaxUserFrames, scratch);
    // libdw reads the outermost frame's saved registers too, and a read past the copy
    // there would look like a cut stack: where the CFI says the return address is
    // undefined (_start, clone), the stack is complete, as the tables and perf end it.
    UnwindModule module;
    CfiRow row;
    if (end == UnwindEnd::kTruncated && scratch->size() > user_at &&
        modules.Find(scratch->back(), &module) && module.cfi != nullptr &&
        module.cfi->Find(scratch->back() - module.bias, &row) && row.ra == CfiRow::kUndefined) {
      end = UnwindEnd::kComplete;
    }
  }
  if (scratch->size() == user_at) scratch->pop_back();  // no usable registers
  if (end == UnwindEnd::kTruncated || end == UnwindEnd::kZeroReturn) {
    scratch->push_back(kTruncatedFrame);
  }
  size_t e = static_cast<size_t>(end);
  if (unwind_ends_.size() <= e) unwind_ends_.resize(e + 1);
  ++unwind_ends_[e];
}

std::span<const uint64_t> Session::Callchain(const Sample& s, std::vector<uint64_t>* scratch) {
  UserStack stack;
  std::span<const uint64_t> chain;
  if (!StartCallchain(s, scratch, &stack, &chain)) return chain;
  const size_t user_at = scratch->size();
  Modules modules = ModulesOf(s.pid);
  UnwindEnd end = UnwindEnd::kUnsupported;
  if (unwind_method_ == UnwindMethod::kTable) {
    end = UnwindUserStack(stack, modules, user_at + kMaxUserFrames, scratch);
  }
  FinishCallchain(s, stack, modules, user_at, end, scratch);
  return *scratch;
}

void Session::Callchains(std::span<const Sample* const> samples, std::vector<uint64_t>* scratch,
                         std::span<const uint64_t>* chains) {
  if (unwind_method_ != UnwindMethod::kTable || samples.size() == 1) {
    for (size_t i = 0; i < samples.size(); ++i) chains[i] = Callchain(*samples[i], &scratch[i]);
    return;
  }
  constexpr size_t kGroup = 16;
  for (size_t from = 0; from < samples.size(); from += kGroup) {
    const size_t n = std::min(kGroup, samples.size() - from);
    std::optional<Modules> modules[kGroup];
    UnwindJob jobs[kGroup];
    size_t job_of[kGroup];   // the sample's job, or kGroup: nothing to unwind
    size_t user_at[kGroup];  // where its user frames start (after the kernel's, and the mark)
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t at = from + i;
      job_of[i] = kGroup;
      UserStack stack;
      if (!StartCallchain(*samples[at], &scratch[at], &stack, &chains[at])) continue;
      modules[i].emplace(ModulesOf(samples[at]->pid));
      user_at[i] = scratch[at].size();
      job_of[i] = count;
      jobs[count++] = {stack, &*modules[i], user_at[i] + kMaxUserFrames, &scratch[at]};
    }
    UnwindUserStacks(std::span<UnwindJob>(jobs, count));
    for (size_t i = 0; i < n; ++i) {
      if (job_of[i] == kGroup) continue;
      const size_t at = from + i;
      const UnwindJob& job = jobs[job_of[i]];
      FinishCallchain(*samples[at], job.in, *modules[i], user_at[i], job.end, &scratch[at]);
      chains[at] = scratch[at];
    }
  }
}

UnwindEnd Session::UnwindWithLibdw(const Sample& s, const UserStack& stack, size_t max,
                                   std::vector<uint64_t>* ips) {
  if (!libdw_) libdw_ = std::make_unique<LibdwUnwinder>();
  auto p = procs_.find(s.pid);
  if (p == procs_.end()) return UnwindEnd::kNoInfo;
  Process& proc = *p->second;
  if (proc.libdw_generation != proc.generation + 1) {
    proc.libdw_maps.clear();
    // A file's bias from its maps of the lowest file offset: it is unambiguous there (a page
    // shared by two segments, such as the start of .data, would give a wrong one). A file
    // mapped twice that way (a child's copy of its parent's library, left from before exec)
    // gives libdw a module for each copy.
    std::vector<MapEntry*> order;
    for (auto& [start, m] : *proc.maps) order.push_back(&m);
    std::stable_sort(order.begin(), order.end(),
                     [](const MapEntry* a, const MapEntry* b) { return a->pgoff < b->pgoff; });
    std::unordered_map<std::string_view, uint64_t> lowest_pgoff;
    for (MapEntry* mp : order) {
      MapEntry& m = *mp;
      if (lowest_pgoff.emplace(m.path, m.pgoff).first->second != m.pgoff) continue;
      if (Symbolizer::UsesPerfMap(m.path)) continue;
      std::shared_ptr<const elf::ElfImage> image = sym_.RuntimeImage(m.path, m.build_id, s.pid);
      CfiTable* cfi = CfiFor(s.pid, m);
      uint64_t vaddr;
      if (!image || cfi == nullptr || !cfi->FileOffsetToVaddr(m.pgoff, &vaddr)) continue;
      std::string file = image->path();
      if (file.empty() || file[0] != '/') {
        // An image held in memory (this machine's vdso): libdw reads it from a memory file.
        auto [it, fresh] = memory_files_.emplace(image.get(), -1);
        if (fresh) {
          int fd = memfd_create("pf-image", MFD_CLOEXEC);
          std::string_view bytes = image->bytes();
          if (fd >= 0 && write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
            close(fd);
            fd = -1;
          }
          it->second = fd;
        }
        if (it->second < 0) continue;
        file = "/proc/self/fd/" + std::to_string(it->second);
      }
      proc.libdw_maps.push_back({file, m.start - vaddr});
    }
    proc.libdw_generation = proc.generation + 1;
  }
  return libdw_->Unwind(s.pid, s.tid, MapsGeneration(s.pid), proc.libdw_maps, stack, max, ips);
}

void Session::Frames(const Sample& s, std::span<const uint64_t> chain,
                     std::vector<ResolvedFrame>* out) {
  out->clear();
  uint16_t mode = s.misc & kCpuModeMask;
  bool kernel = mode == kCpuModeKernel || mode == kCpuModeGuestKernel;
  if (chain.empty()) {
    // The ip stands for a chain the sample did not record; a chain that is empty stays so.
    constexpr uint64_t kSampleCallchain = 1 << 5;
    if (!s.attr || !(s.attr->sample_type & kSampleCallchain)) {
      out->push_back(Resolve(s.pid, s.ip, kernel));
    }
    return;
  }
  // As perf 6.1: inline frames for user frames unwound from stack copies (here, or by
  // pf-record: its streams keep the copy's size in the attribute).
  const bool expand = s.attr && s.attr->sample_stack_user != 0;
  auto add = [&](uint64_t ip) {
    if (kernel) {
      out->push_back(Resolve(s.pid, ip, true));
      // perf's srcline of a kernel address without vmlinux: the dso and the address.
      if (srcline_ && out->back().dso != "[unknown]") {
        out->back().srcline = UnknownSrcline(out->back().dso, ip);
      }
    } else {
      AddUserFrame(s.pid, ip, expand, out);
    }
  };
  bool hypervisor = false;
  const bool unwound = chain.data() != s.callchain.data();
  for (uint64_t ip : chain) {
    if (ip == kTruncatedFrame && unwound) {  // the end of a stack copy: [unknown]
      out->push_back(Resolve(s.pid, ip, false));
      continue;
    }
    if (ip >= kContextMax) {
      // As perf: HV, KERNEL and USER switch the mode; any other marker means the chain is
      // garbage (a frame-pointer walk gone astray), and the whole chain is dropped.
      if (ip == kContextKernel || ip == kContextUser) {
        kernel = ip == kContextKernel;
        hypervisor = false;
      } else if (ip == kContextHv) {
        hypervisor = true;
      } else {
        out->clear();
        return;
      }
      continue;
    }
    if (hypervisor) {  // no maps for the hypervisor: perf prints the raw address
      ResolvedFrame f;
      f.addr = ip;
      f.sym = "[unknown]";
      f.dso = "[unknown]";
      out->push_back(f);
      continue;
    }
    add(ip);
  }
}

DwarfInfo* Session::DwarfFor(uint32_t pid, MapEntry& m) {
  if (m.dwarf_loaded) return m.dwarf;
  m.dwarf_loaded = true;
  if (BinaryPrefetch* p = FindBinaryPrefetch(pid, m)) {
    BinaryPrefetch::Dwarf& d = p->dwarf.Get([this, p] { return MakeDwarf(*p); });
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

// addr2line's names for the map's file (NamesFile). None for [vdso] and other bracketed maps,
// which perf does not hand addr2line.
Addr2lineNames* Session::NamesFor(uint32_t pid, MapEntry& m) {
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

// The srcline perf prints for an address it has no line for: "DSO[ADDR]".
std::string_view Session::UnknownSrcline(std::string_view dso, uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[%" PRIx64 "]", addr);
  return Intern(std::string(dso) + buf);
}

void Session::AddUserFrame(uint32_t pid, uint64_t ip, bool expand,
                           std::vector<ResolvedFrame>* out) {
  auto p = procs_.find(pid);
  const MapEntry* m = p == procs_.end() ? nullptr : FindMap(*p->second->maps, ip);
  if (m == nullptr || Symbolizer::UsesPerfMap(m->path)) {
    ResolveUserFrame(pid, ip, expand, out);
    return;
  }
  auto [it, added] = user_frame_at_.try_emplace(UserFrameKey{pid, expand, m->serial, ip});
  if (!added) {
    out->insert(out->end(), user_frames_.begin() + it->second.first,
                user_frames_.begin() + it->second.first + it->second.second);
    return;
  }
  size_t before = out->size();
  ResolveUserFrame(pid, ip, expand, out);
  it->second = {static_cast<uint32_t>(user_frames_.size()),
                static_cast<uint32_t>(out->size() - before)};
  user_frames_.insert(user_frames_.end(), out->begin() + before, out->end());
}

void Session::ResolveUserFrame(uint32_t pid, uint64_t ip, bool expand,
                               std::vector<ResolvedFrame>* out) {
  MapEntry* m = nullptr;
  ResolvedFrame f = Resolve(pid, ip, false, &m);
  const bool inlines = inline_ && expand;
  if (m == nullptr || (!inlines && !srcline_) || Symbolizer::UsesPerfMap(m->path)) {
    out->push_back(f);
    return;
  }
  // The ELF address perf hands addr2line (map__rip_2objdump).
  CfiTable* cfi = CfiFor(pid, *m);
  uint64_t vaddr = f.addr;
  if (cfi) cfi->FileOffsetToVaddr(f.addr, &vaddr);
  const DwarfInfo::Location* loc = nullptr;
  DwarfInfo* dwarf = nullptr;
  if ((inlines && f.has_sym) || srcline_) {
    dwarf = DwarfFor(pid, *m);
    if (dwarf) loc = &dwarf->Lookup(vaddr);
  }
  // addr2line's answer from the symbol table, for an address DWARF does not place (asked
  // once).
  Addr2lineNames::Answer from_symbols;
  bool asked = false;
  auto symbols_at_ip = [&]() -> const Addr2lineNames::Answer& {
    if (!asked) {
      asked = true;
      if (Addr2lineNames* names = NamesFor(pid, *m)) from_symbols = names->At(vaddr);
    }
    return from_symbols;
  };
  // perf prints a name addr2line gives other than its own symbol's "(inlined)", in place of
  // the frame.
  auto rename = [&](std::string_view name) {
    if (name != f.sym) {
      f.sym = Intern(std::string(name));
      f.inlined = true;
    }
  };
  if (srcline_) {
    // What perf prints from addr2line's answer: the line; when addr2line places the address
    // in a function but has no line (DWARF without one, or only a symbol table), "FILE:0" or
    // "??:0" for a named frame and nothing for an unnamed one; else the dso and the address.
    // Placed from a symbol table, the file is the one BFD finds there (a Rust codegen
    // unit's, a C file's for its static functions), with line 0.
    // As BFD: where DWARF finds nothing at the address, the symbol table places it (function
    // and file); where DWARF finds a function without a linkage name and no line, the
    // symbol table gives the file too. A file symbol may have an empty name (ld writes one
    // before its own local symbols): that is ":0", not "??:0".
    const bool dwarf_found =
        loc && (!loc->srcline.empty() || !loc->function.empty() || !loc->inlined.empty());
    Addr2lineNames::Answer answer;
    if (!dwarf_found || (loc->srcline.empty() && !loc->function.empty() && !loc->function_linkage))
      answer = symbols_at_ip();
    const bool placed = dwarf_found || !answer.function.empty();
    if (loc && !loc->srcline.empty()) {
      f.srcline = Intern(loc->srcline);
    } else if (placed && !f.has_sym) {
      f.srcline = {};
    } else if (placed && answer.has_file) {
      std::string_view file = answer.file.substr(answer.file.rfind('/') + 1);
      f.srcline = Intern(std::string(file) + ":0");
    } else if (placed) {
      f.srcline = "??:0";
    } else {
      f.srcline = UnknownSrcline(f.dso.substr(f.dso.rfind('/') + 1), vaddr);
    }
  }
  if (inlines && loc && f.has_sym && (!loc->inlined.empty() || !loc->function.empty())) {
    // As perf prints addr2line -i's answer: innermost first, each with the address and
    // offset of the frame, each line where it is, then each caller's call site. perf reuses
    // the frame's own symbol for a function of the same name (the function itself, or a
    // recursive one inlined into itself): a plain frame. Any other name is printed
    // "(inlined)", the function's own too when its DWARF name differs from its symbol
    // (glibc's __libc_start_main_impl at __libc_start_main@@GLIBC_2.34, GCC's clones:
    // main at main.cold, f at f.constprop.0): that one then stands for the frame.
    std::string_view line = f.srcline;
    for (size_t i = 0; i < loc->inlined.size(); ++i) {
      ResolvedFrame in = f;
      in.sym = Intern(loc->inlined[i]);
      in.inlined = in.sym != f.sym;
      in.srcline = line;
      out->push_back(in);
      if (srcline_ && !loc->call_sites[i].empty()) line = Intern(loc->call_sites[i]);
    }
    f.srcline = line;
    if (!loc->function.empty() && loc->function != "??") {
      if (loc->function_linkage) {
        rename(loc->function);
      } else {
        // A function without a linkage name (C++ with internal linkage, a lambda, main; C's
        // plain names count as linkage names): named as binutils named it when perf first
        // asked about this address (see function_name_at_).
        auto [at, fresh] = function_name_at_.try_emplace({dwarf, vaddr});
        if (fresh) {
          auto settled = settled_name_.find({dwarf, loc->function_entry});
          if (settled != settled_name_.end()) {
            at->second = settled->second;
          } else if (!loc->inlined.empty()) {
            at->second = Intern(loc->function);
          } else {
            // Its own address: the symbol holding it names it this once, and names the
            // function from now on if it starts at the function's entry.
            const Addr2lineNames::Answer& a = symbols_at_ip();
            std::string_view dwarf_name = Intern(loc->function);
            std::string_view symbol_name = a.function.empty() ? "" : Intern(Demangle(a.function));
            at->second = a.function.empty() ? dwarf_name : symbol_name;
            settled_name_[{dwarf, loc->function_entry}] =
                !a.function.empty() && a.value == loc->function_entry ? symbol_name : dwarf_name;
          }
        }
        rename(at->second);
      }
    }
  } else if (inlines && f.has_sym && !symbols_at_ip().function.empty()) {
    // No DWARF function here: addr2line names the address from the symbol table (another
    // alias than perf's, perhaps).
    rename(Demangle(symbols_at_ip().function));
  }
  out->push_back(f);
}

}  // namespace pf
