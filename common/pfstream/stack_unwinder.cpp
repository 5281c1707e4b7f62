// Unwinding the user stacks copied with the samples (stack_unwinder.h).
//
// A sample recorded with --call-graph dwarf carries the user registers and a copy of the top
// of the user stack; its chain is the kernel part of the recorded chain, then the frames the
// binaries' CFI finds in the copy. The compiled tables (unwind/cfi.h) do the walk, a frame
// of several stacks in turn (Callchains), since each frame's read of the copy waits on
// memory. The unwinder asks for each pc's module and CFI row through Modules, which finds
// the map in the process's maps of the sample's moment and remembers its answer by (maps
// generation, pc) in a small direct-mapped table: return addresses repeat from sample to
// sample. Where the tables meet a rule they cannot express, the stack is unwound again from
// the start with libdw, as perf's libdw backend would (UnwindMethod::kLibdw uses libdw
// alone: the tests' oracle). A chain cut short by the end of the copy ends in
// kTruncatedFrame, which perf prints as `ffffffffffffffff [unknown]`.

#include "pfstream/stack_unwinder.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "elf/elf_image.h"
#include "unwind/cfi.h"

namespace pf {

// The modules of one process, for the unwinder.
class StackUnwinder::Modules : public ModuleLookup {
 public:
  // `generation`: the maps' (0 for maps not to be remembered by).
  Modules(StackUnwinder& unwinder, uint32_t pid, MapTable& maps, MapsGeneration generation)
      : unwinder_(unwinder), pid_(pid), maps_(maps), generation_(generation) {}
  // Return addresses repeat from sample to sample: each (maps, pc) is looked up once, and
  // then found in a small direct-mapped table (RowCache).
  Row FindRow(uint64_t ip, UnwindModule* module, CfiRow* row) override {
    if (generation_ == MapsGeneration{}) return ModuleLookup::FindRow(ip, module, row);
    RowCache::Entry& e = unwinder_.row_cache_.At(generation_, ip);
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
    MapEntry* it = FindMap(maps_, ip);
    if (it == nullptr) return false;
    CfiTable* cfi = unwinder_.tables_.CfiFor(pid_, *it);
    uint64_t vaddr;
    if (cfi == nullptr || !cfi->FileOffsetToVaddr(ip - it->start + it->pgoff, &vaddr)) {
      return false;
    }
    module->cfi = cfi;
    module->bias = ip - vaddr;
    return true;
  }

 private:
  StackUnwinder& unwinder_;
  uint32_t pid_;
  MapTable& maps_;
  MapsGeneration generation_;
};

StackUnwinder::StackUnwinder(ProcessMaps& maps, BinaryTables& tables, Symbolizer& symbolizer)
    : maps_(maps), tables_(tables), sym_(symbolizer) {}

StackUnwinder::~StackUnwinder() {
  for (auto& [image, fd] : memory_files_) close(fd);
}

// The part of Callchain before the unwinding: the recorded chain when the sample has no
// stack copy to unwind (false), else the kernel part and the user mark in `scratch`, and the
// stack.
bool StackUnwinder::StartCallchain(const Sample& s, std::vector<uint64_t>* scratch,
                                   UserStack* stack, std::span<const uint64_t>* chain) {
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

StackUnwinder::Modules StackUnwinder::ModulesOf(uint32_t pid) {
  MapsGeneration generation;
  MapTable* maps = maps_.MapsOf(pid, &generation);
  if (maps == nullptr) return Modules(*this, pid, no_maps_, MapsGeneration{});
  return Modules(*this, pid, *maps, generation);
}

// The part of Callchain after the table unwinder: libdw where it could not go on, and the
// mark of a cut stack.
void StackUnwinder::FinishCallchain(const Sample& s, const UserStack& stack, Modules& modules,
                                    size_t user_at, UnwindEnd end, std::vector<uint64_t>* scratch) {
  if (end == UnwindEnd::kUnsupported) {
    // A rule the tables cannot express (or libdw was asked for): libdw from the start.
    if (method_ == UnwindMethod::kTable) ++libdw_fallbacks_;
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

std::span<const uint64_t> StackUnwinder::Callchain(const Sample& s,
                                                   std::vector<uint64_t>* scratch) {
  UserStack stack;
  std::span<const uint64_t> chain;
  if (!StartCallchain(s, scratch, &stack, &chain)) return chain;
  const size_t user_at = scratch->size();
  Modules modules = ModulesOf(s.pid);
  UnwindEnd end = UnwindEnd::kUnsupported;
  if (method_ == UnwindMethod::kTable) {
    end = UnwindUserStack(stack, modules, user_at + kMaxUserFrames, scratch);
  }
  FinishCallchain(s, stack, modules, user_at, end, scratch);
  return *scratch;
}

void StackUnwinder::Callchains(std::span<const Sample* const> samples,
                               std::vector<uint64_t>* scratch, std::span<const uint64_t>* chains) {
  if (method_ != UnwindMethod::kTable || samples.size() == 1) {
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

// The maps of process `pid` as libdw is given them, made again when they changed. A file's
// bias comes from its map of the lowest file offset: it is unambiguous there (a page shared
// by two segments, such as the start of .data, would give a wrong one). A file mapped twice
// that way (a child's copy of its parent's library, left from before exec) gives libdw a
// module for each copy.
const std::vector<LibdwMap>& StackUnwinder::LibdwMapsOf(uint32_t pid, MapTable& maps,
                                                        MapsGeneration generation) {
  LibdwProcess& proc = libdw_procs_[pid];
  if (proc.built && proc.generation == generation) return proc.maps;
  proc.maps.clear();
  std::vector<MapEntry*> order;
  for (auto& [start, m] : maps) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(),
                   [](const MapEntry* a, const MapEntry* b) { return a->pgoff < b->pgoff; });
  std::unordered_map<std::string_view, uint64_t> lowest_pgoff;
  for (MapEntry* mp : order) {
    MapEntry& m = *mp;
    if (lowest_pgoff.emplace(m.path, m.pgoff).first->second != m.pgoff) continue;
    if (Symbolizer::UsesPerfMap(m.path)) continue;
    std::shared_ptr<const elf::ElfImage> image = sym_.RuntimeImage(m.path, m.build_id, pid);
    CfiTable* cfi = tables_.CfiFor(pid, m);
    uint64_t vaddr;
    if (!image || cfi == nullptr || !cfi->FileOffsetToVaddr(m.pgoff, &vaddr)) continue;
    std::string file = image->path();
    if (file.empty() || file[0] != '/') {
      // An image held in memory (this machine's vdso): libdw reads it from a memory file.
      auto [it, fresh] = memory_files_.emplace(image.get(), -1);
      if (fresh) {
        int fd = memfd_create("pf-image", MFD_CLOEXEC);
        std::string_view bytes = image->bytes();
        if (fd >= 0 &&
            write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
          close(fd);
          fd = -1;
        }
        it->second = fd;
      }
      if (it->second < 0) continue;
      file = "/proc/self/fd/" + std::to_string(it->second);
    }
    proc.maps.push_back({file, m.start - vaddr});
  }
  proc.built = true;
  proc.generation = generation;
  return proc.maps;
}

UnwindEnd StackUnwinder::UnwindWithLibdw(const Sample& s, const UserStack& stack, size_t max,
                                         std::vector<uint64_t>* ips) {
  if (!libdw_) libdw_ = std::make_unique<LibdwUnwinder>();
  MapsGeneration generation;
  MapTable* maps = maps_.MapsOf(s.pid, &generation);
  if (maps == nullptr) return UnwindEnd::kNoInfo;
  const std::vector<LibdwMap>& libdw_maps = LibdwMapsOf(s.pid, *maps, generation);
  return libdw_->Unwind(s.pid, s.tid, maps_.Generation(s.pid).value, libdw_maps, stack, max, ips);
}

}  // namespace pf
