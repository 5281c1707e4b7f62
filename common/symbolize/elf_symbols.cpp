// A binary's symbols as perf names them (elf_symbols.h gives the rules and their sources). The
// rules that decide which symbol owns an address are perf's, and perf keeps its symbols in a
// red-black tree whose shape decides which of two overlapping symbols a lookup finds: the
// tree's insertions are replayed (RbReplay) to give the same answer, and the result is turned
// into sorted, non-overlapping ranges (SymbolRanges) that a lookup binary-searches. Reading a
// large table (libc with its debug file) takes milliseconds, so the finished ranges and names
// are kept in the cache on disk and restored, bounds-checked, when the file is unchanged.

#include "symbolize/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <span>
#include <unordered_map>

#include "base/byte_cursor.h"
#include "base/error.h"
#include "base/teardown.h"
#include "symbolize/cache_entry.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_cache.h"
#include "symbolize/elf_image.h"

namespace pf {

namespace {

using namespace elf;

constexpr uint32_t kNone = UINT32_MAX;
// perf formats PLT names into a 1024-byte buffer (snprintf), so longer ones are cut.
constexpr size_t kPltNameMax = 1023;

// ---------------------------------------------------------------------------------------------
// perf's symbol-table rules

size_t LeadingUnderscores(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '_') ++n;
  return n;
}


}  // namespace

// ---------------------------------------------------------------------------------------------
// A replay of perf's red-black tree of symbols (the kernel's lib/rbtree.c balancing, which is
// the textbook algorithm): same insertions in the same order, same erasures, same search. Used
// only when symbol ranges overlap, where the search result depends on the tree's shape.

namespace {

class RbReplay {
 public:
  /// Inserts a symbol; equal starts go to the right (after the existing ones).
  int Insert(uint64_t start, uint64_t end, uint32_t id) {
    int z = static_cast<int>(nodes_.size());
    nodes_.push_back({start, end, id, -1, -1, -1, true});
    int parent = -1;
    for (int x = root_; x >= 0;) {
      parent = x;
      x = start < nodes_[x].start ? nodes_[x].left : nodes_[x].right;
    }
    nodes_[z].parent = parent;
    if (parent < 0)
      root_ = z;
    else if (start < nodes_[parent].start)
      nodes_[parent].left = z;
    else
      nodes_[parent].right = z;
    InsertFixup(z);
    return z;
  }

  void Erase(int z) {
    int y = z;
    bool y_was_red = nodes_[y].red;
    int x, x_parent;
    if (nodes_[z].left < 0) {
      x = nodes_[z].right;
      x_parent = nodes_[z].parent;
      Transplant(z, x);
    } else if (nodes_[z].right < 0) {
      x = nodes_[z].left;
      x_parent = nodes_[z].parent;
      Transplant(z, x);
    } else {
      y = nodes_[z].right;
      while (nodes_[y].left >= 0) y = nodes_[y].left;
      y_was_red = nodes_[y].red;
      x = nodes_[y].right;
      if (nodes_[y].parent == z) {
        x_parent = y;
      } else {
        x_parent = nodes_[y].parent;
        Transplant(y, x);
        nodes_[y].right = nodes_[z].right;
        nodes_[nodes_[y].right].parent = y;
      }
      Transplant(z, y);
      nodes_[y].left = nodes_[z].left;
      nodes_[nodes_[y].left].parent = y;
      nodes_[y].red = nodes_[z].red;
    }
    if (!y_was_red) EraseFixup(x, x_parent);
  }

  struct Node {
    uint64_t start, end;
    uint32_t id;
    int left, right, parent;
    bool red;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  int root() const { return root_; }

 private:
  bool Red(int n) const { return n >= 0 && nodes_[n].red; }

  void Transplant(int u, int v) {
    int p = nodes_[u].parent;
    if (p < 0)
      root_ = v;
    else if (nodes_[p].left == u)
      nodes_[p].left = v;
    else
      nodes_[p].right = v;
    if (v >= 0) nodes_[v].parent = p;
  }

  void RotateLeft(int x) {
    int y = nodes_[x].right;
    nodes_[x].right = nodes_[y].left;
    if (nodes_[y].left >= 0) nodes_[nodes_[y].left].parent = x;
    Transplant(x, y);
    nodes_[y].left = x;
    nodes_[x].parent = y;
  }

  void RotateRight(int x) {
    int y = nodes_[x].left;
    nodes_[x].left = nodes_[y].right;
    if (nodes_[y].right >= 0) nodes_[nodes_[y].right].parent = x;
    Transplant(x, y);
    nodes_[y].right = x;
    nodes_[x].parent = y;
  }

  void InsertFixup(int z) {
    while (Red(nodes_[z].parent)) {
      int p = nodes_[z].parent;
      int g = nodes_[p].parent;
      if (p == nodes_[g].left) {
        int u = nodes_[g].right;
        if (Red(u)) {
          nodes_[p].red = nodes_[u].red = false;
          nodes_[g].red = true;
          z = g;
          continue;
        }
        if (z == nodes_[p].right) {
          z = p;
          RotateLeft(z);
          p = nodes_[z].parent;
        }
        nodes_[p].red = false;
        nodes_[g].red = true;
        RotateRight(g);
      } else {
        int u = nodes_[g].left;
        if (Red(u)) {
          nodes_[p].red = nodes_[u].red = false;
          nodes_[g].red = true;
          z = g;
          continue;
        }
        if (z == nodes_[p].left) {
          z = p;
          RotateRight(z);
          p = nodes_[z].parent;
        }
        nodes_[p].red = false;
        nodes_[g].red = true;
        RotateLeft(g);
      }
    }
    nodes_[root_].red = false;
  }

  void EraseFixup(int x, int parent) {
    while (x != root_ && !Red(x)) {
      if (parent < 0) break;
      if (x == nodes_[parent].left) {
        int w = nodes_[parent].right;
        if (Red(w)) {
          nodes_[w].red = false;
          nodes_[parent].red = true;
          RotateLeft(parent);
          w = nodes_[parent].right;
        }
        if (!Red(nodes_[w].left) && !Red(nodes_[w].right)) {
          nodes_[w].red = true;
          x = parent;
          parent = nodes_[x].parent;
        } else {
          if (!Red(nodes_[w].right)) {
            nodes_[nodes_[w].left].red = false;
            nodes_[w].red = true;
            RotateRight(w);
            w = nodes_[parent].right;
          }
          nodes_[w].red = nodes_[parent].red;
          nodes_[parent].red = false;
          if (nodes_[w].right >= 0) nodes_[nodes_[w].right].red = false;
          RotateLeft(parent);
          x = root_;
          parent = -1;
        }
      } else {
        int w = nodes_[parent].left;
        if (Red(w)) {
          nodes_[w].red = false;
          nodes_[parent].red = true;
          RotateRight(parent);
          w = nodes_[parent].left;
        }
        if (!Red(nodes_[w].right) && !Red(nodes_[w].left)) {
          nodes_[w].red = true;
          x = parent;
          parent = nodes_[x].parent;
        } else {
          if (!Red(nodes_[w].left)) {
            nodes_[nodes_[w].right].red = false;
            nodes_[w].red = true;
            RotateLeft(w);
            w = nodes_[parent].left;
          }
          nodes_[w].red = nodes_[parent].red;
          nodes_[parent].red = false;
          if (nodes_[w].left >= 0) nodes_[nodes_[w].left].red = false;
          RotateRight(parent);
          x = root_;
          parent = -1;
        }
      }
    }
    if (x >= 0) nodes_[x].red = false;
  }

  std::vector<Node> nodes_;
  int root_ = -1;
};

std::string DirName(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return std::string(path.substr(0, slash));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Table rules shared with kallsyms.

bool PreferFirstSymbol(const TableSymbol& a, std::string_view a_name, const TableSymbol& b,
                       std::string_view b_name) {
  // A symbol with a size, then a non-weak one, then a global one, then fewer leading
  // underscores, then the longer name; on a full tie the first one stays.
  bool a_sized = a.end > a.start, b_sized = b.end > b.start;
  if (a_sized != b_sized) return a_sized;
  bool a_weak = a.binding == STB_WEAK, b_weak = b.binding == STB_WEAK;
  if (a_weak != b_weak) return !a_weak;
  bool a_global = a.binding == STB_GLOBAL, b_global = b.binding == STB_GLOBAL;
  if (a_global != b_global) return a_global;
  size_t a_us = LeadingUnderscores(a_name), b_us = LeadingUnderscores(b_name);
  if (a_us != b_us) return a_us < b_us;
  if (a_name.size() != b_name.size()) return a_name.size() > b_name.size();
  return true;
}

void FixupSymbolEnds(std::vector<TableSymbol>& sorted, bool kallsyms) {
  if (sorted.empty()) return;
  for (size_t i = 1; i < sorted.size(); ++i) {
    TableSymbol& prev = sorted[i - 1];
    const TableSymbol& curr = sorted[i];
    if (prev.end != prev.start) continue;
    if (kallsyms && prev.module != curr.module) {
      // The last symbol before the other kind's (core kernel / module) gap gets one page.
      prev.end = ((prev.end + 4096) + 4095) & ~uint64_t{4095};
    } else {
      prev.end = curr.start;
    }
  }
  TableSymbol& last = sorted.back();
  if (last.end == last.start) last.end = ((last.start + 4095) & ~uint64_t{4095}) + 4096;
}

std::vector<uint32_t> RemoveDuplicateSymbols(std::vector<TableSymbol>& sorted,
                                             const TableNameFn& name) {
  // perf walks the tree in order comparing a symbol with its successor; the loser is erased
  // and the walk goes on from the survivor.
  std::vector<uint32_t> erased;
  std::vector<bool> gone(sorted.size(), false);
  size_t curr = 0;
  while (curr < sorted.size()) {
    size_t next = curr + 1;
    while (next < sorted.size() && sorted[next].start == sorted[curr].start) {
      if (PreferFirstSymbol(sorted[curr], name(sorted[curr].id), sorted[next],
                            name(sorted[next].id))) {
        gone[next] = true;
        erased.push_back(sorted[next].id);
        ++next;
      } else {
        gone[curr] = true;
        erased.push_back(sorted[curr].id);
        curr = next;
        ++next;
      }
    }
    curr = next;
  }
  size_t out = 0;
  for (size_t i = 0; i < sorted.size(); ++i)
    if (!gone[i]) sorted[out++] = sorted[i];
  sorted.resize(out);
  return erased;
}

void SymbolRanges::Insert(const TableSymbol& s) {
  if (s.id >= index_.size()) index_.resize(size_t{s.id} + 1, kNone);
  index_[s.id] = static_cast<uint32_t>(symbols_.size());
  ops_.push_back({false, symbols_.size()});
  symbols_.push_back(s);
}

void SymbolRanges::Erase(uint32_t id) {
  if (id < index_.size() && index_[id] != kNone) ops_.push_back({true, index_[id]});
}

void SymbolRanges::SetEnd(uint32_t id, uint64_t end) {
  if (id < index_.size() && index_[id] != kNone) symbols_[index_[id]].end = end;
}

void SymbolRanges::Finish() {
  // The symbols alive at the end, in address order (stable: insertion order on ties).
  std::vector<TableSymbol> alive;
  {
    std::vector<bool> gone(symbols_.size(), false);
    for (const auto& [erase, at] : ops_)
      if (erase) gone[at] = true;
    for (size_t i = 0; i < symbols_.size(); ++i)
      if (!gone[i]) alive.push_back(symbols_[i]);
  }
  std::stable_sort(alive.begin(), alive.end(),
                   [](const TableSymbol& a, const TableSymbol& b) { return a.start < b.start; });

  // A symbol covers [start, end), a zero-size one its start alone; an end below the start
  // (wrapped around) covers nothing.
  auto last = [](const TableSymbol& t) -> uint64_t {
    if (t.start == UINT64_MAX) return t.start;
    return t.end == t.start ? t.start + 1 : std::max(t.start, t.end);
  };
  bool overlap = false;
  for (size_t i = 1; i < alive.size() && !overlap; ++i)
    overlap = alive[i].start < last(alive[i - 1]);
  own_ranges_.clear();
  own_nodes_.clear();
  root_ = -1;
  tree_ = overlap;
  if (!overlap) {
    for (const TableSymbol& t : alive) {
      if (last(t) == t.start) continue;
      if (!own_ranges_.empty() && own_ranges_.back().start == t.start) own_ranges_.pop_back();
      own_ranges_.push_back({t.start, t.id, 0});
      own_ranges_.push_back({last(t), kNone, 0});
    }
  } else {
    // The search's answer depends on the tree's shape: keep the replayed tree and search it
    // (a lookup walks one path; flattening it would search at every start and end).
    RbReplay tree;
    std::vector<int> node_of(symbols_.size(), -1);
    for (const auto& [erase, at] : ops_) {
      const TableSymbol& t = symbols_[at];
      if (!erase) {
        node_of[at] = tree.Insert(t.start, t.end, t.id);
      } else if (node_of[at] >= 0) {
        tree.Erase(node_of[at]);
        node_of[at] = -1;
      }
    }
    // (Erased nodes stay in the array, unreachable.)
    for (const RbReplay::Node& n : tree.nodes())
      own_nodes_.push_back({n.start, n.end, n.id, n.left, n.right, 0});
    root_ = tree.root();
  }
  // Merge neighbours with the same answer.
  size_t out = 0;
  for (size_t i = 0; i < own_ranges_.size(); ++i) {
    if (out > 0 && own_ranges_[out - 1].id == own_ranges_[i].id) continue;
    own_ranges_[out++] = own_ranges_[i];
  }
  own_ranges_.resize(out);
  ranges_ = own_ranges_;
  nodes_ = own_nodes_;
  symbols_ = {};
  index_ = {};
  ops_ = {};
}

void SymbolRanges::Save(EntryWriter& w) const {
  w.Put(static_cast<uint32_t>(ranges_.size()));
  w.Flag(tree_);
  w.Pad8();
  w.Array(ranges_);
  if (!tree_) return;
  w.Put(root_);
  w.Put(static_cast<uint32_t>(nodes_.size()));
  w.Array(nodes_);
}

bool SymbolRanges::Restore(EntryReader& r, uint32_t id_limit) {
  uint32_t count;
  bool tree;
  if (!r.Get(&count) || !r.Flag(&tree) || !r.Pad8() || !r.Array(count, &ranges_)) return false;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const Range& g = ranges_[i];
    if ((g.id >= id_limit && g.id != kNone) || g.zero != 0 ||
        (i > 0 && g.start < ranges_[i - 1].start)) {
      return false;
    }
  }
  tree_ = tree;
  nodes_ = {};
  root_ = -1;
  if (tree_) {
    uint32_t nodes;
    if (!r.Get(&root_) || !r.Get(&nodes) || !r.Array(nodes, &nodes_)) return false;
    auto valid = [nodes](int32_t v) { return v >= -1 && v < static_cast<int64_t>(nodes); };
    if (!valid(root_)) return false;
    // Children in range make every step of a search land on a node; Find bounds the number
    // of steps, so a corrupt shape (a cycle) cannot make it loop.
    for (const Node& n : nodes_)
      if (n.id >= id_limit || !valid(n.left) || !valid(n.right) || n.zero != 0) return false;
  }
  own_ranges_ = {};
  own_nodes_ = {};
  return true;
}

bool SymbolRanges::Find(uint64_t address, uint32_t* id) const {
  if (tree_) {
    // perf's search. A red-black tree of n nodes is at most 2 log2(n + 1) deep: 64 steps for
    // any table; more only in a corrupt cache entry.
    int32_t n = root_;
    for (int step = 0; n >= 0 && step < 128; ++step) {
      const Node& s = nodes_[static_cast<size_t>(n)];
      if (address < s.start) {
        n = s.left;
      } else if (address > s.end || (address == s.end && address != s.start)) {
        n = s.right;
      } else {
        *id = s.id;  // a zero-size symbol matches its own address
        return true;
      }
    }
    return false;
  }
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t v, const Range& r) { return v < r.start; });
  if (it == ranges_.begin()) return false;
  --it;
  if (it->id == kNone) return false;
  *id = it->id;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reading symbols.

class ElfSymbols::Builder {
 public:
  Builder(ElfSymbols* out, bool demangle) : out_(out), demangle_(demangle) {}

  // Symbols from `syms` (its .symtab, then its .dynsym) and PLT entries from `runtime`.
  void Build(const ElfImage& syms, const ElfImage* runtime) {
    if (runtime == nullptr) runtime = &syms;
    out_->demangle_ = demangle_;
    out_->symbols_path_ = syms.path();
    for (const ProgramHeader& p : runtime->segments())
      if (p.type == PT_LOAD) out_->segments_.push_back({p.offset, p.vaddr, p.filesz, p.memsz});

    // perf reads .symtab and then .dynsym into one tree; after each table it extends the
    // zero sizes and drops duplicates over the whole tree. PLT entries come last, and only
    // when the tables gave symbols.
    size_t from_tables = 0;
    if (syms.symtab() >= 0) from_tables += ReadTable(syms, syms.symtab(), *runtime);
    if (syms.dynsym() >= 0) from_tables += ReadTable(syms, syms.dynsym(), *runtime);
    if (from_tables > 0) SynthesizePlt(*runtime);
    out_->ranges_.Finish();
    out_->symbols_ = out_->own_symbols_;
    out_->names_ = out_->own_names_;
  }

 private:
  uint32_t AddName(std::string_view name) {
    uint32_t at = static_cast<uint32_t>(out_->own_names_.size());
    out_->own_names_.append(name);
    return at;
  }

  // The name of a symbol added so far.
  std::string_view RawName(uint32_t id) const {
    const Sym& y = out_->own_symbols_[id];
    return std::string_view(out_->own_names_).substr(y.name_offset, y.name_size);
  }

  std::string_view CompareName(uint32_t id) {
    if (!demangle_ || !MayDemangle(RawName(id))) return RawName(id);
    auto it = demangled_.find(id);
    if (it == demangled_.end()) it = demangled_.emplace(id, Demangle(RawName(id))).first;
    return it->second;
  }

  // The file offset of a symbol's address: through the runtime binary's PT_LOAD segment
  // holding it, else through its section (as perf does).
  static uint64_t Adjust(uint64_t value, const Section& sec, const ElfImage& runtime) {
    for (const ProgramHeader& p : runtime.segments()) {
      if (p.type == PT_LOAD && value >= p.vaddr && value - p.vaddr < p.memsz)
        return value - p.vaddr + p.offset;
    }
    return value - sec.addr + sec.offset;
  }

  // One symbol table pass; returns the number of symbols added.
  size_t ReadTable(const ElfImage& syms, int table_index, const ElfImage& runtime) {
    const std::vector<Section>& sections = syms.sections();
    const Section& table = sections[table_index];
    if (table.link >= sections.size()) return 0;
    std::string_view strtab = syms.SectionData(sections[table.link]);
    std::string_view data = syms.SectionData(table);
    size_t count = syms.SymbolCount(table);
    bool arm = syms.machine() == EM_ARM || syms.machine() == EM_AARCH64;
    size_t added = 0;

    for (size_t i = 0; i < count; ++i) {
      RawSymbol sym = syms.ReadSymbol(data, i);
      uint8_t type = ELF64_ST_TYPE(sym.info);
      uint8_t visibility = ELF64_ST_VISIBILITY(sym.other);
      bool is_label = type == STT_NOTYPE && sym.name != 0 && sym.shndx != SHN_UNDEF &&
                      sym.shndx != SHN_ABS && visibility != STV_HIDDEN &&
                      visibility != STV_INTERNAL;
      // Functions and (since perf keeps one table for code and data) objects.
      bool is_function = (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT) &&
                         sym.name != 0 && sym.shndx != SHN_UNDEF;
      if (!is_label && !is_function) continue;
      std::string_view name = CString(strtab, sym.name);
      if (name.empty()) continue;
      // ARM mapping symbols ($a, $d, $t, $x) name no function.
      if (arm && name.size() >= 2 && name[0] == '$' && std::strchr("adtx", name[1]) != nullptr &&
          (name.size() == 2 || name[2] == '.'))
        continue;
      // The symbol's section: special indexes (ABS, COMMON) have none; perf gives up on them.
      if (sym.shndx >= SHN_LORESERVE || sym.shndx >= sections.size()) continue;
      const Section* sec = &sections[sym.shndx];
      if ((sec->flags & SHF_ALLOC) == 0) continue;
      std::string_view sec_name = syms.SectionName(*sec);
      // A debug file's sections are NOBITS: their file offsets come from the binary.
      if (sec->type == SHT_NOBITS && &runtime != &syms && sym.shndx < runtime.sections().size()) {
        sec = &runtime.sections()[sym.shndx];
        sec_name = runtime.SectionName(*sec);
      }
      if (is_label && sec_name.find("text") == std::string_view::npos &&
          sec_name.find("data") == std::string_view::npos)
        continue;
      if (arm && type == STT_FUNC && (sym.value & 1)) sym.value &= ~uint64_t{1};  // Thumb

      uint64_t start = Adjust(sym.value, *sec, runtime);
      uint32_t id = static_cast<uint32_t>(out_->own_symbols_.size());
      out_->own_symbols_.push_back(
          {start, start + sym.size, AddName(name), static_cast<uint32_t>(name.size()), 0, {}});
      TableSymbol t{start, start + sym.size, id, static_cast<uint8_t>(ELF64_ST_BIND(sym.info)), false};
      out_->ranges_.Insert(t);
      tree_.push_back(t);
      ++added;
    }
    if (added == 0) return 0;

    // The tree in order: by start, equal starts in insertion order.
    std::stable_sort(tree_.begin(), tree_.end(),
                     [](const TableSymbol& a, const TableSymbol& b) { return a.start < b.start; });
    FixupSymbolEnds(tree_, false);
    for (const TableSymbol& t : tree_) {
      if (out_->own_symbols_[t.id].end != t.end) {
        out_->own_symbols_[t.id].end = t.end;
        out_->ranges_.SetEnd(t.id, t.end);
      }
    }
    for (uint32_t id : RemoveDuplicateSymbols(
             tree_, [this](uint32_t id) -> std::string_view { return CompareName(id); }))
      out_->ranges_.Erase(id);
    return added;
  }

  // perf 6.1's PLT symbols: one `name@plt` per .rela.plt (or .rel.plt) entry, at .plt's file
  // offset + one header entry + index * sh_entsize (entry sizes of other architectures as perf
  // has them).
  void SynthesizePlt(const ElfImage& image) {
    if (image.dynsym() < 0) return;
    const std::vector<Section>& sections = image.sections();
    int rel_index = image.FindSection(".rela.plt");
    if (rel_index < 0) rel_index = image.FindSection(".rel.plt");
    if (rel_index < 0) return;
    const Section& rel = sections[rel_index];
    if (rel.link != static_cast<uint32_t>(image.dynsym())) return;
    int plt_index = image.FindSection(".plt");
    if (plt_index < 0) return;
    const Section& plt = sections[plt_index];
    const Section& dynsym = sections[image.dynsym()];
    if (dynsym.link >= sections.size()) return;
    std::string_view strtab = image.SectionData(sections[dynsym.link]);
    std::string_view symdata = image.SectionData(dynsym);
    std::string_view reldata = image.SectionData(rel);
    if (strtab.empty() || reldata.empty() || rel.entsize == 0) return;

    uint64_t header, entry;
    switch (image.machine()) {
      case EM_ARM:
        header = 20, entry = 12;
        break;
      case EM_AARCH64:
        header = 32, entry = 16;
        break;
      case EM_SPARC:
        header = 48, entry = 12;
        break;
      case EM_SPARCV9:
        header = 128, entry = 32;
        break;
      default:
        header = entry = plt.entsize;
        break;
    }
    bool rela = rel.type == SHT_RELA;
    size_t count = rel.size / rel.entsize;
    size_t available = reldata.size() / image.RelocationSize(rela);
    count = std::min(count, available);
    uint64_t at = plt.offset + header;
    for (size_t i = 0; i < count; ++i) {
      int64_t symidx = image.RelocationSymbol(reldata, rela, i);
      if (symidx < 0) break;
      RawSymbol sym = image.ReadSymbol(symdata, static_cast<size_t>(symidx));
      std::string_view name = CString(strtab, sym.name);
      uint32_t id = static_cast<uint32_t>(out_->own_symbols_.size());
      out_->own_symbols_.push_back(
          {at, at + entry, AddName(name), static_cast<uint32_t>(name.size()), 1, {}});
      out_->ranges_.Insert({at, at + entry, id, STB_GLOBAL, false});
      at += entry;
    }
  }

  ElfSymbols* out_;
  bool demangle_;
  std::vector<TableSymbol> tree_;  // perf's tree in order (alive symbols)
  std::unordered_map<uint32_t, std::string> demangled_;
};

ElfSymbols::~ElfSymbols() = default;

std::unique_ptr<ElfSymbols> ElfSymbols::FromFile(const std::string& path, bool demangle) {
  std::unique_ptr<ElfImage> image = ElfImage::Open(path);
  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols);
  out->build_id_ = image->BuildId();
  out->debuglink_ = image->Debuglink();
  Builder(out.get(), demangle).Build(*image, nullptr);
  return out;
}

std::unique_ptr<ElfSymbols> ElfSymbols::FromImage(std::string_view bytes, std::string name,
                                                  bool demangle) {
  std::unique_ptr<ElfImage> image = ElfImage::FromBytes(bytes, std::move(name));
  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols);
  out->build_id_ = image->BuildId();
  out->debuglink_ = image->Debuglink();
  Builder(out.get(), demangle).Build(*image, nullptr);
  return out;
}

std::unique_ptr<ElfSymbols> ElfSymbols::Search(std::string_view path,
                                               const ElfLoadOptions& options,
                                               std::vector<std::string>* probed) {
  const std::string real = options.symfs + std::string(path);
  probed->push_back(real);
  std::unique_ptr<ElfImage> binary;
  std::string binary_error;
  try {
    binary = ElfImage::Open(real);
  } catch (const Error& e) {
    binary_error = e.Describe();
  }

  // The build-id every candidate must have: the recorded one, else the binary's own.
  std::string build_id = options.build_id;
  for (char& c : build_id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string file_build_id = binary ? binary->BuildId() : std::string();
  if (build_id.empty()) build_id = file_build_id;
  std::string debuglink = binary ? binary->Debuglink() : std::string();

  // Candidates in perf's order (dso__load's binary types).
  std::vector<std::string> candidates;
  const std::string dir = DirName(real);
  if (binary && !debuglink.empty()) {
    for (const std::string& c :
         {dir + "/" + debuglink, dir + "/.debug/" + debuglink,
          options.symfs + "/usr/lib/debug" + DirName(path) + "/" + debuglink}) {
      probed->push_back(c);
      if (IsRegularFile(c)) {
        candidates.push_back(c);
        break;
      }
    }
  }
  std::string bid_tail;
  if (build_id.size() > 2) {
    std::string trimmed = build_id;
    // A zero-padded recorded id names the file by its real length.
    if (!file_build_id.empty() && BuildIdMatches(build_id, file_build_id)) trimmed = file_build_id;
    bid_tail = trimmed.substr(0, 2) + "/" + trimmed.substr(2);
    if (!options.build_id_cache.empty()) {
      std::string link = options.build_id_cache + "/.build-id/" + bid_tail;
      probed->push_back(link);
      if (IsRegularFile(link)) {
        candidates.push_back(link);  // the old cache layout: the link is the file
      } else {
        candidates.push_back(link + "/elf");
        candidates.push_back(link + "/debug");
      }
    }
  }
  candidates.push_back(options.symfs + "/usr/lib/debug" + std::string(path) + ".debug");
  candidates.push_back(options.symfs + "/usr/lib/debug" + std::string(path));
  if (!bid_tail.empty())
    candidates.push_back(options.symfs + "/usr/lib/debug/.build-id/" + bid_tail + ".debug");
  candidates.push_back(real);

  std::unique_ptr<ElfImage> first_used, second_used;  // owners of `syms` and `runtime`
  const ElfImage* syms = nullptr;
  const ElfImage* runtime = nullptr;
  for (const std::string& c : candidates) {
    if (c != real) probed->push_back(c);
    std::unique_ptr<ElfImage> image;
    if (c == real) {
      if (!binary) continue;
      image = std::move(binary);
    } else {
      if (!IsRegularFile(c)) continue;
      try {
        image = ElfImage::Open(c);
      } catch (const Error&) {
        continue;
      }
    }
    if (!build_id.empty() && !BuildIdMatches(build_id, image->BuildId())) continue;
    bool used = false;
    if (syms == nullptr && image->symtab() >= 0) {
      syms = image.get();
      used = true;
    }
    if (runtime == nullptr && image->dynsym() >= 0) {
      runtime = image.get();
      used = true;
    }
    if (used) (first_used ? second_used : first_used) = std::move(image);
    if (syms != nullptr && runtime != nullptr) break;
  }
  if (syms == nullptr && runtime == nullptr) {
    if (!binary_error.empty()) throw Error(binary_error);
    throw Error(real, "no symbol table (or build-id mismatch)");
  }
  if (syms == nullptr) syms = runtime;

  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols);
  out->build_id_ = build_id;
  out->debuglink_ = debuglink;
  Builder(out.get(), options.demangle).Build(*syms, runtime);
  return out;
}

namespace {

// The symbol cache's entries: a format of their own in the DWARF cache's directory.
constexpr uint64_t kSymbolsFormat = 2;

// What decides whether a file is still the one an entry was made from: its type, device,
// inode, size, modification and change times (all zero for a missing file).
std::array<uint64_t, 8> FileState(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_mode & S_IFMT),   static_cast<uint64_t>(st.st_dev),
          static_cast<uint64_t>(st.st_ino),             static_cast<uint64_t>(st.st_size),
          static_cast<uint64_t>(st.st_mtim.tv_sec),     static_cast<uint64_t>(st.st_mtim.tv_nsec),
          static_cast<uint64_t>(st.st_ctim.tv_sec),     static_cast<uint64_t>(st.st_ctim.tv_nsec)};
}

// The entry's name: what was asked (the path and the options) and the binary's state; ""
// when the binary is not a regular file (nothing to key on).
std::string SymbolsCacheKey(std::string_view path, const ElfLoadOptions& options) {
  std::string real = options.symfs + std::string(path);
  std::array<uint64_t, 8> state = FileState(real);
  if (state[0] != S_IFREG) return "";
  std::string asked;
  PutRaw(&asked, kSymbolsFormat);
  for (std::string_view part : {std::string_view(options.symfs), path,
                                std::string_view(options.build_id),
                                std::string_view(options.build_id_cache)}) {
    PutStr(&asked, part);
  }
  PutRaw(&asked, static_cast<uint8_t>(options.demangle));
  PutRaw(&asked, state);
  char name[18];
  std::snprintf(name, sizeof name, "s%016" PRIx64, XXH3_64bits(asked.data(), asked.size()));
  return name;
}

}  // namespace

std::unique_ptr<ElfSymbols> ElfSymbols::Load(std::string_view path, const ElfLoadOptions& options) {
  const std::string dir = CacheDir();
  const std::string key = dir.empty() ? "" : SymbolsCacheKey(path, options);
  if (MappedEntry entry = MapCachedEntry(dir, key)) {
    // The files the search looked at, each as it was; then the symbols, 8-aligned. The table
    // is read in place (views into the mapped entry, which it keeps): glibc's 8,000 symbols
    // restored in 0.47 ms when they were copied out.
    EntryReader r(entry.bytes);
    uint32_t files = 0;
    bool same = r.Get(&files);
    for (uint32_t i = 0; same && i < files; ++i) {
      std::string file;
      std::array<uint64_t, 8> state;
      same = r.Str(&file) && r.Get(&state) && FileState(file) == state;
    }
    std::unique_ptr<ElfSymbols> restored;
    if (same && r.Pad8()) restored = RestoredIn(r.rest(), std::move(entry.owner));
    if (restored) {
      restored->from_cache_ = true;
      return restored;
    }
  }
  std::vector<std::string> probed;
  std::unique_ptr<ElfSymbols> out = Search(path, options, &probed);
  if (!key.empty()) {
    EntryWriter w;
    w.Put(static_cast<uint32_t>(probed.size()));
    for (const std::string& file : probed) {
      w.Str(file);
      w.Put(FileState(file));
    }
    w.Pad8();  // the table's arrays are read in place: 8-aligned in the mapped entry
    w.Append(out->Saved());
    StoreCachedImage(dir, key, w.Take());
  }
  return out;
}

std::string ElfSymbols::Saved() const {
  EntryWriter w;
  for (std::string_view s : {std::string_view(build_id_), std::string_view(debuglink_),
                             std::string_view(symbols_path_), names_}) {
    w.Str(s);
  }
  w.Flag(demangle_);
  w.Put(static_cast<uint32_t>(segments_.size()));
  for (const Segment& g : segments_) {
    for (uint64_t v : {g.offset, g.vaddr, g.filesz, g.memsz}) w.Put(v);
  }
  w.Put(static_cast<uint32_t>(symbols_.size()));
  w.Pad8();
  w.Array(symbols_);
  ranges_.Save(w);
  return w.Take();
}

std::unique_ptr<ElfSymbols> ElfSymbols::Restored(std::string_view bytes) {
  // A copy, 8-aligned, that the table's views keep alive.
  std::shared_ptr<uint64_t[]> copy(new uint64_t[(bytes.size() + 7) / 8]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  const char* at = reinterpret_cast<const char*>(copy.get());
  return RestoredIn(std::string_view(at, bytes.size()), std::move(copy));
}

std::unique_ptr<ElfSymbols> ElfSymbols::RestoredIn(std::string_view bytes,
                                                   std::shared_ptr<const void> owner) {
  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols);
  EntryReader r(bytes);
  if (!out->Restore(r) || !r.AtEnd()) return nullptr;
  out->image_ = std::move(owner);
  return out;
}

bool ElfSymbols::Restore(EntryReader& r) {
  uint32_t count = 0;
  if (!r.Str(&build_id_) || !r.Str(&debuglink_) || !r.Str(&symbols_path_) ||
      !r.View(&names_) || !r.Flag(&demangle_) || !r.Count(&count, sizeof(Segment))) {
    return false;
  }
  segments_.resize(count);
  for (Segment& g : segments_) {
    if (!r.Get(&g.offset) || !r.Get(&g.vaddr) || !r.Get(&g.filesz) || !r.Get(&g.memsz))
      return false;
  }
  if (!r.Get(&count) || !r.Pad8() || !r.Array(count, &symbols_)) return false;
  for (const Sym& y : symbols_) {
    if (y.plt > 1 || y.name_offset > names_.size() || y.name_size > names_.size() - y.name_offset) {
      return false;
    }
    for (uint8_t z : y.zero)
      if (z != 0) return false;
  }
  own_symbols_ = {};
  own_names_ = {};
  return ranges_.Restore(r, count);
}

bool ElfSymbols::Find(uint64_t file_offset, uint32_t* index, uint64_t* offset) const {
  if (!ranges_.Find(file_offset, index)) return false;
  *offset = file_offset - symbols_[*index].start;
  return true;
}

std::string_view ElfSymbols::RawName(uint32_t index) const {
  const Sym& s = symbols_[index];
  return names_.substr(s.name_offset, s.name_size);
}

std::string ElfSymbols::Name(uint32_t index) const {
  std::string name = demangle_ ? Demangle(RawName(index)) : std::string(RawName(index));
  if (symbols_[index].plt) {
    name += "@plt";
    if (name.size() > kPltNameMax) name.resize(kPltNameMax);
  }
  return name;
}

bool ElfSymbols::FileOffsetToVaddr(uint64_t file_offset, uint64_t* vaddr) const {
  for (const Segment& s : segments_) {
    if (file_offset >= s.offset && file_offset - s.offset < std::max(s.filesz, s.memsz)) {
      *vaddr = file_offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

bool ElfSymbols::VaddrToFileOffset(uint64_t vaddr, uint64_t* file_offset) const {
  for (const Segment& s : segments_) {
    if (vaddr >= s.vaddr && vaddr - s.vaddr < std::max(s.filesz, s.memsz)) {
      *file_offset = vaddr - s.vaddr + s.offset;
      return true;
    }
  }
  return false;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ReadElfIdentity(const std::string& path, std::string* build_id, std::string* debuglink) {
  if (!IsRegularFile(path)) return false;
  try {
    std::unique_ptr<ElfImage> image = ElfImage::Open(path);
    if (build_id != nullptr) *build_id = image->BuildId();
    if (debuglink != nullptr) *debuglink = image->Debuglink();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace pf
