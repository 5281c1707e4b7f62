// Reading a binary's symbols as perf reads them (elf_symbols.h gives the rules and their
// sources). Search finds the files perf would read, in perf's order (the .gnu_debuglink file,
// the build-id cache, /usr/lib/debug, the binary), skipping any whose build-id differs; the
// Builder then reads the symbol table and the dynamic one, applying perf's table rules
// (elf_symbols_ranges.cpp) after each as perf does, and adds perf's `name@plt` entries. The
// result is an ElfSymbols whose own vectors hold the symbols and names (the cache on disk,
// elf_symbols.cpp, stores and restores them).

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>

#include "base/error.h"
#include "symbolize/demangle.h"
#include "elf/elf_image.h"
#include "symbolize/elf_symbols.h"

namespace pf {

namespace {

using namespace elf;

std::string DirName(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return std::string(path.substr(0, slash));
}

// The files that may hold the symbols of `path`, in perf's order (dso__load's binary types):
// the .gnu_debuglink file (`debuglink`, "" when the binary names none), the build-id cache,
// /usr/lib/debug, the binary itself. Notes in `probed` the paths whose state decided the list.
std::vector<std::string> SymbolFileCandidates(std::string_view path, const ElfLoadOptions& options,
                                              const std::string& build_id,
                                              const std::string& file_build_id,
                                              const std::string& debuglink,
                                              std::vector<std::string>* probed) {
  const std::string real = options.symfs + std::string(path);
  std::vector<std::string> candidates;
  const std::string dir = DirName(real);
  if (!debuglink.empty()) {
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
  return candidates;
}

}  // namespace

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
    Reserve(syms, *runtime);
    size_t from_tables = 0;
    if (syms.symtab() >= 0) from_tables += ReadTable(syms, syms.symtab(), *runtime);
    if (syms.dynsym() >= 0) from_tables += ReadTable(syms, syms.dynsym(), *runtime);
    if (from_tables > 0) SynthesizePlt(*runtime);
    out_->ranges_.Finish();
    out_->symbols_ = out_->own_symbols_;
    out_->names_ = out_->own_names_;
  }

 private:
  // Room for every symbol the tables and the PLT may give, and their names: libpython's
  // 20,000 symbols and 600 KB of names were otherwise copied at each doubling.
  void Reserve(const ElfImage& syms, const ElfImage& runtime) {
    // (Sizes of the section data in the file: a lying header reserves no more than that.)
    auto strings = [](const ElfImage& image, int table) -> size_t {
      const std::vector<Section>& sections = image.sections();
      if (table < 0 || sections[table].link >= sections.size()) return 0;
      return image.SectionData(sections[sections[table].link]).size();
    };
    size_t symbols = 0, names = 0;
    for (int t : {syms.symtab(), syms.dynsym()}) {
      if (t < 0) continue;
      symbols += syms.SymbolCount(syms.sections()[t]);
      names += strings(syms, t);
    }
    if (int rel = runtime.FindSection(".rela.plt"); rel >= 0 && runtime.sections()[rel].entsize) {
      symbols += runtime.SectionData(runtime.sections()[rel]).size() / runtime.sections()[rel].entsize;
      names += strings(runtime, runtime.dynsym());
    }
    out_->own_symbols_.reserve(symbols);
    out_->own_names_.reserve(names);
    out_->ranges_.Reserve(symbols);
    tree_.reserve(symbols);
  }

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

  std::vector<std::string> candidates =
      SymbolFileCandidates(path, options, build_id, file_build_id, debuglink, probed);

  // The first candidate with a .symtab gives the symbols, the first with a .dynsym the PLT.
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
