// Replaying a recording's threads and maps (process_maps.h), so that each sample is named
// with the maps of its moment. Processes are kept by pid, each with its maps in an ordered
// table; the comms are kept by thread. Records update them as perf updates its own: a COMM
// names a thread, a FORK gives the child its parent's comm and maps, an EXIT may end a
// process, and an MMAP/MMAP2 enters a map, cutting away the parts of older ones it overlaps.
//
// Two things keep a long recording cheap. A forked process shares its parent's map table
// until one of them maps something (copy on write): a shell's thousands of subshells copy
// nothing. And the tables take their nodes from a free list of one size (NodePool), since a
// script's processes each copy and drop dozens of maps. Every change of a process's maps
// takes a new serial as its generation, so callers can cache by (generation, address)
// without ever answering for maps that changed since.

#include "pfstream/process_maps.h"

#include <algorithm>
#include <optional>

#include "pfstream/records.h"
#include "elf/elf_image.h"

namespace pf {

namespace {
constexpr uint16_t kCpuModeMask = 7;
constexpr uint16_t kCpuModeKernel = 1;
constexpr uint16_t kCpuModeGuestKernel = 4;
constexpr uint32_t kKernelPid = 0xffffffffu;
}  // namespace

// Nodes of one size (a map table's) on a free list, carved from blocks of 64 KiB; any other
// size from the heap.
class ProcessMaps::NodePool final : public std::pmr::memory_resource {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

 private:
  void* do_allocate(size_t bytes, size_t align) override {
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
  void do_deallocate(void* p, size_t bytes, size_t align) override {
    const size_t size = (bytes + 15) & ~size_t{15};
    if (size != node_ || align > 16) {
      std::pmr::new_delete_resource()->deallocate(p, bytes, align);
      return;
    }
    *static_cast<void**>(p) = free_;
    free_ = p;
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  size_t node_ = 0;  // the one size kept on the free list (the first asked for)
  void* free_ = nullptr;
  char* next_ = nullptr;
  size_t left_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
};

struct ProcessMaps::Process {
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
  MapsGeneration generation;  // the serial of the maps' last change (0: none)
  // Its live threads, known from the FORK that made it on; none for a process that ran
  // before the recording (not all its threads are known). A thread's EXIT counts only when
  // its FORK did, so a lost FORK record cannot make a process look finished.
  std::vector<uint32_t> threads;  // (few: a search is cheaper than a set's allocations)
  bool exited = false;            // all its threads have (ForgetExited): to be forgotten
};

ProcessMaps::ProcessMaps() : map_nodes_(std::make_unique<NodePool>()) {}
ProcessMaps::~ProcessMaps() = default;

ProcessMaps::Process& ProcessMaps::Proc(uint32_t pid) {
  auto& p = procs_[pid];
  if (!p) p = std::make_unique<Process>(map_nodes_.get());
  return *p;
}

void ProcessMaps::AddMap(MapTable& maps, MapEntry m) {
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

// As hex, so the file's copy in the build-id cache is used even if the file changed since.
std::string ProcessMaps::BuildIdOf(const PerfDataReader& reader, const std::string& path) {
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

void ProcessMaps::OnRecord(const PerfDataReader& reader, const Record& r) {
  switch (r.type) {
    case kRecordComm:
      return OnComm(r);
    case kRecordFork:
      return OnFork(r);
    case kRecordExit:
      return OnExit(r);
    case kRecordHeaderBuildId: {  // (delivered in file mode: perf inject -b)
      PerfDataReader::BuildId id;
      if (ParseBuildIdRecord(r, &id)) build_id_by_path_[id.path] = elf::Hex(id.id);
      return;
    }
    case kRecordMmap:
    case kRecordMmap2:
      return OnMmap(reader, r);
    default:
      return;
  }
}

void ProcessMaps::OnComm(const Record& r) {
  CommRecord c;
  if (!ParseComm(r, &c)) return;
  comms_[c.tid] = std::string(c.comm);
  if (c.pid != c.tid && !comms_.count(c.pid)) comms_[c.pid] = comms_[c.tid];
}

void ProcessMaps::OnFork(const Record& r) {
  ForkRecord f;
  if (!ParseFork(r, &f)) return;
  ForgetProcesses();
  const uint32_t pid = f.pid, ppid = f.ppid, tid = f.tid, ptid = f.ptid;
  auto parent_comm = comms_.find(ptid);
  if (parent_comm != comms_.end()) comms_[tid] = parent_comm->second;
  // A new process starts with its parent's maps, except for the FORK records perf
  // synthesizes for processes that already ran (PERF_RECORD_MISC_FORK_EXEC): their own
  // maps follow, and a clone would leave stale ones beside them.
  constexpr uint16_t kMiscForkExec = 1 << 13;
  if (pid != ppid && !(r.misc & kMiscForkExec)) {
    // A pid used again: the exited process it named is gone (a new one starts without its
    // maps even when the parent is not known).
    if (auto old = procs_.find(pid); old != procs_.end() && old->second->exited) {
      procs_.erase(old);
    }
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
}

// A process whose every thread has exited is forgotten (with ForgetExited), a little later: a
// shell script's thousands of short-lived commands do not keep their maps.
void ProcessMaps::OnExit(const Record& r) {
  ForkRecord e;
  if (!forget_exited_ || !ParseFork(r, &e)) return;
  ForgetProcesses();
  const uint32_t pid = e.pid, tid = e.tid;
  auto p = procs_.find(pid);
  if (p == procs_.end()) return;
  std::vector<uint32_t>& live = p->second->threads;
  auto t = std::find(live.begin(), live.end(), tid);
  if (t == live.end()) return;
  live.erase(t);
  if (!live.empty()) return;
  // A sample may still come after the last EXIT (the kernel samples the exit path after it
  // writes the record, and perf keeps an exited thread's maps): the process goes only after
  // kExitedKept later ones, or when its pid is used again (OnFork).
  p->second->exited = true;
  exited_.push_back(pid);
  if (exited_.size() <= kExitedKept) return;
  auto old = procs_.find(exited_.front());
  exited_.pop_front();
  if (old != procs_.end() && old->second->exited) procs_.erase(old);
}

void ProcessMaps::OnMmap(const PerfDataReader& reader, const Record& r) {
  MmapRecord mm;
  if (!ParseMmap(r, &mm)) return;
  ForgetProcesses();
  const uint32_t pid = mm.pid;
  MapEntry m{mm.start, mm.start + mm.len, mm.pgoff, {}, {}};
  std::string build_id = mm.has_build_id ? elf::Hex(mm.build_id) : std::string();
  std::string path(mm.filename);
  if (build_id.empty()) build_id = BuildIdOf(reader, path);
  uint16_t mode = r.misc & kCpuModeMask;
  const bool kernel = pid == kKernelPid || mode == kCpuModeKernel || mode == kCpuModeGuestKernel;
  // perf names the kernel image "[kernel.kallsyms]" (its map is "..._text").
  if (kernel && path.rfind("[kernel.kallsyms]", 0) == 0) path = "[kernel.kallsyms]";
  m.path = strings_.Name(strings_.Intern(path));
  m.build_id = strings_.Name(strings_.Intern(build_id));
  if (kernel) {
    AddMap(kernel_maps_, std::move(m));
    ++kernel_generation_;
  } else {
    Process& p = Proc(pid);
    AddMap(p.OwnMaps(), std::move(m));
    p.generation = ++generation_serial_;
  }
}

void ProcessMaps::AddUserMap(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                             std::string_view path, std::string_view build_id) {
  ForgetProcesses();
  MapEntry m{start, end, pgoff, {}, {}};
  m.path = strings_.Name(strings_.Intern(path));
  m.build_id = strings_.Name(strings_.Intern(build_id));
  Process& p = Proc(pid);
  AddMap(p.OwnMaps(), std::move(m));
  p.generation = ++generation_serial_;
}

const MapTable* ProcessMaps::MapsOf(uint32_t pid) const {
  auto it = procs_.find(pid);
  return it == procs_.end() ? nullptr : it->second->maps.get();
}

MapTable* ProcessMaps::MapsOf(uint32_t pid, MapsGeneration* generation) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return nullptr;
  *generation = it->second->generation;
  return it->second->maps.get();
}

const ProcessMaps::FoundProcess& ProcessMaps::LookUp(uint32_t pid) const {
  FoundProcess& f = found_[pid % kFound];
  auto p = procs_.find(pid);
  f.pid = pid;
  f.valid = true;
  f.maps = p == procs_.end() ? nullptr : p->second->maps.get();
  f.generation = p == procs_.end() ? MapsGeneration() : p->second->generation;
  return f;
}

MapsGeneration ProcessMaps::Generation(uint32_t pid) const {
  return MapsGeneration((kernel_generation_ << 32) ^ Found(pid).generation.value);
}

std::string_view ProcessMaps::Comm(uint32_t tid) {
  FoundComm& found = found_comms_[tid % kFound];
  if (found.comm != nullptr && found.tid == tid) return *found.comm;
  auto it = comms_.find(tid);
  if (it == comms_.end()) {
    // perf names the idle thread (tid 0) "swapper", and others it never saw ":TID".
    std::string name = tid == 0 ? "swapper" : std::to_string(static_cast<int32_t>(tid));
    if (tid != 0) name.insert(name.begin(), ':');
    it = comms_.emplace(tid, std::move(name)).first;
  }
  found = {tid, &it->second};
  return it->second;
}

}  // namespace pf
