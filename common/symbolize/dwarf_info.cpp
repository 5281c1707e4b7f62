#include "symbolize/dwarf_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "symbolize/demangle.h"

namespace pf {

struct DwarfInfo::Handle {
  int fd = -1;
  Dwarf* dwarf = nullptr;
  ~Handle() {
    if (dwarf) dwarf_end(dwarf);
    if (fd >= 0) close(fd);
  }
};

namespace {

// A string attribute, following DW_AT_abstract_origin and DW_AT_specification.
const char* StringAttr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return nullptr;
  return dwarf_formstring(&attr);
}

// The name perf would give the function of `die`: its linkage name demangled (without
// parameters, as perf prints symbols), else its plain name.
std::string FunctionName(Dwarf_Die* die, bool demangle) {
  const char* linkage = StringAttr(die, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = StringAttr(die, DW_AT_MIPS_linkage_name);
  if (linkage != nullptr) return demangle ? Demangle(linkage) : std::string(linkage);
  const char* name = StringAttr(die, DW_AT_name);
  return name ? name : "??";
}

}  // namespace

DwarfInfo::~DwarfInfo() = default;

std::unique_ptr<DwarfInfo> DwarfInfo::Open(const std::string& path, bool demangle) {
  auto h = std::make_unique<Handle>();
  h->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (h->fd < 0) return nullptr;
  h->dwarf = dwarf_begin(h->fd, DWARF_C_READ);
  if (h->dwarf == nullptr) return nullptr;
  auto info = std::unique_ptr<DwarfInfo>(new DwarfInfo);
  info->h_ = std::move(h);
  info->demangle_ = demangle;
  return info;
}

const DwarfInfo::Location& DwarfInfo::Lookup(uint64_t vaddr) {
  auto it = cache_.find(vaddr);
  if (it != cache_.end()) return it->second;
  Location& loc = cache_[vaddr];
  Dwarf_Die cu;
  if (dwarf_addrdie(h_->dwarf, vaddr, &cu) == nullptr) return loc;

  // The line: the line table's row for the address, the file's base name.
  if (Dwarf_Line* line = dwarf_getsrc_die(&cu, vaddr)) {
    int lineno = 0;
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    if (file != nullptr && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
      const char* slash = std::strrchr(file, '/');
      loc.srcline = std::string(slash ? slash + 1 : file) + ":" + std::to_string(lineno);
    }
  }

  // The scopes, innermost first; each inlined subroutine is a frame of its own.
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(&cu, vaddr, &scopes);
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  for (int i = 0; i < n; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_inlined_subroutine) {
      loc.inlined.push_back(FunctionName(&scopes[i], demangle_));
      // The call site: DW_AT_call_file (an index into the CU's files) and DW_AT_call_line.
      std::string site;
      Dwarf_Attribute attr;
      Dwarf_Word file = 0, line = 0;
      if (dwarf_attr(&scopes[i], DW_AT_call_file, &attr) && dwarf_formudata(&attr, &file) == 0 &&
          dwarf_attr(&scopes[i], DW_AT_call_line, &attr) && dwarf_formudata(&attr, &line) == 0 &&
          (files != nullptr || dwarf_getsrcfiles(&cu, &files, &nfiles) == 0) && file < nfiles) {
        if (const char* name = dwarf_filesrc(files, file, nullptr, nullptr)) {
          const char* slash = std::strrchr(name, '/');
          site = std::string(slash ? slash + 1 : name) + ":" + std::to_string(line);
        }
      }
      loc.call_sites.push_back(std::move(site));
    } else if (tag == DW_TAG_subprogram) {
      break;  // the function the code belongs to: the symbol names it
    }
  }
  free(scopes);
  return loc;
}

}  // namespace pf
