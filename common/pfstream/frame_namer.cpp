// Naming frames as perf script does (frame_namer.h).
//
// A kernel address is named from kallsyms (the kernel image's map reaches as far as kallsyms
// does; a module's symbol only when the recording maps the module). A user address is found
// in its process's maps of the sample's moment, turned into a file offset and named from its
// binary's symbols (JIT code from /tmp/perf-PID.map). That much is what perf does itself.
// For the rest perf runs binutils' addr2line on the binary, and this file replays what
// addr2line answers: the functions inlined at a frame unwound from a stack copy (each its
// own "(inlined)" frame before it), the frame's source line, and the names addr2line gives
// where DWARF alone does not say (from the symbol table, for an address DWARF does not
// place; for a function without a linkage name, the name it settled on when first asked,
// which depends on the order of the questions: see function_name_at_). A user frame's
// answer is kept by (process, map, address), so each is worked out once.

#include "pfstream/frame_namer.h"

#include <cinttypes>
#include <cstdio>

#include "base/error.h"
#include "pfstream/sample_layout.h"
#include "pfstream/stack_unwinder.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_info.h"
#include "unwind/cfi.h"
#include "unwind/unwinder.h"

namespace pf {

namespace {
constexpr uint16_t kCpuModeMask = 7;
constexpr uint16_t kCpuModeKernel = 1;
constexpr uint16_t kCpuModeGuestKernel = 4;
constexpr uint64_t kTruncatedFrame = StackUnwinder::kTruncatedFrame;  // a stack copy's end

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
}  // namespace

// A user address being named, and what it asked so far: its map, the ELF address perf hands
// addr2line, DWARF's answer there, and addr2line's answer from the symbol table (asked at
// most once).
struct FrameNamer::UserAddress {
  UserAddress(uint32_t pid, MapEntry* map, BinaryTables& tables)
      : pid(pid), map(map), tables(tables) {}
  uint32_t pid;
  MapEntry* map;
  BinaryTables& tables;
  uint64_t vaddr = 0;
  DwarfInfo* dwarf = nullptr;
  const DwarfInfo::Location* loc = nullptr;

  const Addr2lineNames::Answer& SymbolsAtIp() {
    if (!asked) {
      asked = true;
      if (Addr2lineNames* names = tables.NamesFor(pid, *map)) from_symbols = names->At(vaddr);
    }
    return from_symbols;
  }

 private:
  bool asked = false;
  Addr2lineNames::Answer from_symbols;
};

FrameNamer::FrameNamer(ProcessMaps& maps, BinaryTables& tables, Symbolizer& symbolizer)
    : maps_(maps), tables_(tables), sym_(symbolizer) {
  ResolvedFrame unmapped;
  unmapped.sym = "[unknown]";
  unmapped.dso = "[unknown]";
  unmapped_name_ = NameIdOf(Add(unmapped));
}
FrameNamer::~FrameNamer() = default;

FrameNamer::FrameStrings FrameNamer::FrameStrings::Of(const ResolvedFrame& f) {
  return {f.sym.data(),    f.dso.data(),    f.srcline.data(),
          f.sym.size(),    f.dso.size(),    f.srcline.size(),
          uint64_t{f.has_sym} | uint64_t{f.kernel} << 1 | uint64_t{f.inlined} << 2};
}

size_t FrameNamer::FrameStringsHash::operator()(const FrameStrings& k) const {
  return MixU64(reinterpret_cast<uintptr_t>(k.sym) ^ reinterpret_cast<uintptr_t>(k.dso) << 13 ^
                reinterpret_cast<uintptr_t>(k.srcline) << 29 ^ uint64_t{k.sym_size} << 7 ^
                uint64_t{k.dso_size} << 37 ^ k.srcline_size ^ uint64_t{k.marks} << 59);
}

size_t FrameNamer::FrameFieldsHash::operator()(const FrameFields& k) const {
  return FrameStringsHash()(k.strings) ^
         MixU64(k.addr ^ k.symoff << 23 ^ reinterpret_cast<uintptr_t>(k.build_id) << 41 ^
                k.build_id_size);
}

FrameId FrameNamer::Add(const ResolvedFrame& f) {
  bool added;
  NameId name = name_id_of_.TryEmplace(
      FrameStrings::Of(f), NameId(static_cast<uint32_t>(name_id_of_.size())), &added);
  if (frame_count_ >= kUnmapped) throw Error("more than 2^31 distinct frames");
  if (frame_count_ % kChunk == 0) frames_.push_back(std::make_unique<ResolvedFrame[]>(kChunk));
  frames_.back()[frame_count_ % kChunk] = f;
  ++frame_count_;
  name_ids_.push_back(name);
  return FrameId(frame_count_ - 1);
}

FrameId FrameNamer::Find(const ResolvedFrame& f) {
  bool added;
  FrameFields key{FrameStrings::Of(f), f.build_id.data(), f.build_id.size(), f.addr, f.symoff};
  FrameId& id = found_.TryEmplace(key, FrameId::Invalid(), &added);
  if (added) id = Add(f);  // (Add leaves found_ be)
  return id;
}

FrameId FrameNamer::UnmappedFrame(uint64_t ip) {
  ResolvedFrame& f = unmapped_.emplace_back();
  f.addr = ip;
  f.sym = "[unknown]";
  f.dso = "[unknown]";
  return FrameId(kUnmapped + static_cast<uint32_t>(unmapped_.size() - 1));
}

FrameId FrameNamer::KernelFrame(uint64_t ip, bool srcline) {
  if (maps_.KernelGeneration() != kernel_generation_) {
    kernel_frame_at_ = {};  // (the frames stay in the table)
    kernel_generation_ = maps_.KernelGeneration();
  }
  bool added;
  auto& at = kernel_frame_at_.TryEmplace(ip, {FrameId::Invalid(), FrameId::Invalid()}, &added);
  if (added) at.first = Add(ResolveKernel(ip));
  if (!srcline) return at.first;
  if (!at.second.valid()) {
    // perf's srcline of a kernel address without vmlinux: the dso and the address.
    ResolvedFrame f = Frame(at.first);
    if (f.dso != "[unknown]") f.srcline = UnknownSrcline(f.dso, ip);
    at.second = f.srcline.empty() ? at.first : Add(f);  // (Add leaves the map be)
  }
  return at.second;
}

ResolvedFrame FrameNamer::ResolveKernel(uint64_t ip) {
  ResolvedFrame f;
  f.kernel = true;
  f.addr = ip;
  f.sym = "[unknown]";
  f.dso = "[unknown]";
  // As perf: the kernel image's map reaches as far as kallsyms does, so any address may
  // be named from it; a module's symbol is named only when the recording maps that module
  // (its dso is then "[module]"); otherwise the frame is [unknown] ([unknown]).
  const MapEntry* km = maps_.FindKernel(ip);
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

ResolvedFrame FrameNamer::ResolveUser(uint32_t pid, uint64_t ip, MapEntry** map) {
  ResolvedFrame f;
  f.addr = ip;
  f.sym = "[unknown]";
  f.dso = "[unknown]";
  MapEntry* m = maps_.FindUser(pid, ip);
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
  f.build_id = m->build_id;
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

void FrameNamer::Frames(const Sample& s, std::span<const uint64_t> chain,
                        std::vector<ResolvedFrame>* out) {
  FrameIds(s, chain, &ids_);
  out->clear();
  for (FrameId id : ids_) out->push_back(Frame(id));
}

void FrameNamer::UserFrames(uint32_t pid, uint64_t ip, std::vector<ResolvedFrame>* out) {
  ids_.clear();
  unmapped_.clear();
  AddUserFrame(pid, ip, true, &ids_);
  for (FrameId id : ids_) out->push_back(Frame(id));
}

void FrameNamer::FrameIds(const Sample& s, std::span<const uint64_t> chain,
                          std::vector<FrameId>* out) {
  out->clear();
  unmapped_.clear();
  uint16_t mode = s.misc & kCpuModeMask;
  bool kernel = mode == kCpuModeKernel || mode == kCpuModeGuestKernel;
  if (chain.empty()) {
    // The ip stands for a chain the sample did not record; a chain that is empty stays so.
    if (!s.attr || !(s.attr->sample_type & sample_layout::kCallchain)) {
      out->push_back(kernel ? KernelFrame(s.ip, false) : Find(ResolveUser(s.pid, s.ip, nullptr)));
    }
    return;
  }
  // As perf 6.1: inline frames for user frames unwound from stack copies (here, or by
  // pf-record: its streams keep the copy's size in the attribute).
  const bool expand = s.attr && s.attr->sample_stack_user != 0;
  bool hypervisor = false;
  const bool unwound = chain.data() != s.callchain.data();
  for (uint64_t ip : chain) {
    if (ip == kTruncatedFrame && unwound) {  // the end of a stack copy: [unknown]
      out->push_back(Find(ResolveUser(s.pid, ip, nullptr)));
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
      out->push_back(UnmappedFrame(ip));
    } else if (kernel) {
      out->push_back(KernelFrame(ip, srcline_));
    } else {
      AddUserFrame(s.pid, ip, expand, out);
    }
  }
}

// The srcline perf prints for an address it has no line for: "DSO[ADDR]".
std::string_view FrameNamer::UnknownSrcline(std::string_view dso, uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[%" PRIx64 "]", addr);
  return Intern(std::string(dso) + buf);
}

void FrameNamer::AddUserFrame(uint32_t pid, uint64_t ip, bool expand,
                              std::vector<FrameId>* out) {
  MapEntry* m = maps_.FindUser(pid, ip);
  if (m == nullptr) {
    out->push_back(UnmappedFrame(ip));  // (ResolveUser's frame)
    return;
  }
  if (Symbolizer::UsesPerfMap(m->path)) {
    out->push_back(Find(ResolveUser(pid, ip, nullptr)));  // (ResolveUserFrame's frame)
    return;
  }
  if (!(inline_ && expand) && !srcline_) {
    out->push_back(PlainUserFrame(pid, ip, *m));
    return;
  }
  bool added;
  auto& at = user_frame_at_.TryEmplace(UserFrameKey{pid, expand, m->serial, ip}, {}, &added);
  if (!added) {
    out->insert(out->end(), user_frames_.begin() + at.first,
                user_frames_.begin() + at.first + at.second);
    return;
  }
  at.first = static_cast<uint32_t>(user_frames_.size());
  resolved_.clear();
  ResolveUserFrame(pid, ip, expand, &resolved_);  // (adds nothing to user_frame_at_)
  at.second = static_cast<uint32_t>(resolved_.size());
  for (const ResolvedFrame& f : resolved_) user_frames_.push_back(Add(f));
  out->insert(out->end(), user_frames_.end() - at.second, user_frames_.end());
}

// ResolveUser's frame, which depends on the map's binary, path and build-id and the file
// offset alone (Symbolizer::BinaryOf, LookupIn).
FrameId FrameNamer::PlainUserFrame(uint32_t pid, uint64_t ip, MapEntry& m) {
  if (m.object == 0) {
    if (!m.binary_loaded) {
      m.binary = sym_.BinaryOf(m.path, m.build_id, pid);
      m.binary_loaded = true;
    }
    bool added;
    m.object = objects_.TryEmplace(Object{m.binary, m.path.data(), m.build_id.data()},
                                   static_cast<uint32_t>(objects_.size() + 1), &added);
  }
  bool added;
  FrameId& id = plain_frame_at_.TryEmplace(ObjectOffset{m.object, ip - m.start + m.pgoff},
                                           FrameId::Invalid(), &added);
  if (added) id = Add(ResolveUser(pid, ip, nullptr));  // (Add leaves plain_frame_at_ be)
  return id;
}

void FrameNamer::ResolveUserFrame(uint32_t pid, uint64_t ip, bool expand,
                                  std::vector<ResolvedFrame>* out) {
  MapEntry* m = nullptr;
  ResolvedFrame f = Resolve(pid, ip, false, &m);
  const bool inlines = inline_ && expand;
  if (m == nullptr || (!inlines && !srcline_) || Symbolizer::UsesPerfMap(m->path)) {
    out->push_back(f);
    return;
  }
  UserAddress at(pid, m, tables_);
  // The ELF address perf hands addr2line (map__rip_2objdump).
  CfiTable* cfi = tables_.CfiFor(pid, *m);
  at.vaddr = f.addr;
  if (cfi) cfi->FileOffsetToVaddr(f.addr, &at.vaddr);
  if ((inlines && f.has_sym) || srcline_) {
    at.dwarf = tables_.DwarfFor(pid, *m);
    if (at.dwarf) at.loc = &at.dwarf->Lookup(at.vaddr);
  }
  if (srcline_) f.srcline = Srcline(f, at);
  const DwarfInfo::Location* loc = at.loc;
  if (inlines && loc && f.has_sym && (!loc->inlined.empty() || !loc->function.empty())) {
    AddInlineFrames(f, at, out);
  } else if (inlines && f.has_sym && !at.SymbolsAtIp().function.empty()) {
    // No DWARF function here: addr2line names the address from the symbol table (another
    // alias than perf's, perhaps).
    Rename(f, Demangle(at.SymbolsAtIp().function));
  }
  out->push_back(f);
}

// perf prints a name addr2line gives other than its own symbol's "(inlined)", in place of
// the frame.
void FrameNamer::Rename(ResolvedFrame& f, std::string_view name) {
  if (name != f.sym) {
    f.sym = Intern(std::string(name));
    f.inlined = true;
  }
}

// What perf prints from addr2line's answer: the line; when addr2line places the address in a
// function but has no line (DWARF without one, or only a symbol table), "FILE:0" or "??:0"
// for a named frame and nothing for an unnamed one; else the dso and the address. Placed
// from a symbol table, the file is the one BFD finds there (a Rust codegen unit's, a C
// file's for its static functions), with line 0.
std::string_view FrameNamer::Srcline(const ResolvedFrame& f, UserAddress& at) {
  // As BFD: where DWARF finds nothing at the address, the symbol table places it (function
  // and file); where DWARF finds a function without a linkage name and no line, the symbol
  // table gives the file too. A file symbol may have an empty name (ld writes one before its
  // own local symbols): that is ":0", not "??:0".
  const DwarfInfo::Location* loc = at.loc;
  const bool dwarf_found =
      loc && (!loc->srcline.empty() || !loc->function.empty() || !loc->inlined.empty());
  Addr2lineNames::Answer answer;
  if (!dwarf_found || (loc->srcline.empty() && !loc->function.empty() && !loc->function_linkage))
    answer = at.SymbolsAtIp();
  const bool placed = dwarf_found || !answer.function.empty();
  if (loc && !loc->srcline.empty()) return Intern(loc->srcline);
  if (placed && !f.has_sym) return {};
  if (placed && answer.has_file) {
    std::string_view file = answer.file.substr(answer.file.rfind('/') + 1);
    return Intern(std::string(file) + ":0");
  }
  if (placed) return "??:0";
  return UnknownSrcline(f.dso.substr(f.dso.rfind('/') + 1), at.vaddr);
}

// As perf prints addr2line -i's answer: innermost first, each with the address and offset of
// the frame, each line where it is, then each caller's call site. perf reuses the frame's own
// symbol for a function of the same name (the function itself, or a recursive one inlined
// into itself): a plain frame. Any other name is printed "(inlined)", the function's own too
// when its DWARF name differs from its symbol (glibc's __libc_start_main_impl at
// __libc_start_main@@GLIBC_2.34, GCC's clones: main at main.cold, f at f.constprop.0): that
// one then stands for the frame.
void FrameNamer::AddInlineFrames(ResolvedFrame& f, UserAddress& at,
                                 std::vector<ResolvedFrame>* out) {
  const DwarfInfo::Location* loc = at.loc;
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
  if (loc->function.empty() || loc->function == "??") return;
  // A function without a linkage name (C++ with internal linkage, a lambda, main; C's plain
  // names count as linkage names) is named as binutils named it when perf first asked.
  Rename(f, loc->function_linkage ? std::string_view(loc->function) : NameWithoutLinkage(at));
}

// The name addr2line gives a function without a linkage name at `at` (see function_name_at_).
std::string_view FrameNamer::NameWithoutLinkage(UserAddress& at) {
  const DwarfInfo::Location* loc = at.loc;
  auto [name, fresh] = function_name_at_.try_emplace({at.dwarf, at.vaddr});
  if (!fresh) return name->second;
  auto settled = settled_name_.find({at.dwarf, loc->function_entry});
  if (settled != settled_name_.end()) {
    name->second = settled->second;
  } else if (!loc->inlined.empty()) {
    name->second = Intern(loc->function);
  } else {
    // Its own address: the symbol holding it names it this once, and names the function
    // from now on if it starts at the function's entry.
    const Addr2lineNames::Answer& a = at.SymbolsAtIp();
    std::string_view dwarf_name = Intern(loc->function);
    std::string_view symbol_name = a.function.empty() ? "" : Intern(Demangle(a.function));
    name->second = a.function.empty() ? dwarf_name : symbol_name;
    settled_name_[{at.dwarf, loc->function_entry}] =
        !a.function.empty() && a.value == loc->function_entry ? symbol_name : dwarf_name;
  }
  return name->second;
}

}  // namespace pf
