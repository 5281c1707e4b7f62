// What existed before a recording began, from /proc (proc.h lists the records). Each process
// is read as it is now: its threads, their comms and parents, its executable maps and the
// build-id of each mapped file (read from the ELF notes through /proc/PID/root, once per
// file), then written as the COMM, FORK and MMAP2 records perf synthesizes. Processes and
// threads can exit while they are read, so every read may fail, and a failure skips that entry
// instead of ending the recording. The kernel's text range comes from /proc/kallsyms.

#include "perf/proc.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "base/regular_file.h"

namespace pf {

namespace {

// Reads a small /proc file whole ("" when it cannot be read).
std::string ReadSmallFile(const std::string& path, size_t limit = 16 << 20) {
  std::string out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() >= limit) break;
  }
  close(fd);
  return out;
}

std::vector<int> NumericEntries(const std::string& dir) {
  std::vector<int> ids;
  DIR* d = opendir(dir.c_str());
  if (!d) return ids;
  while (dirent* e = readdir(d)) {
    int v = 0;
    const char* name = e->d_name;
    auto r = std::from_chars(name, name + std::strlen(name), v);
    if (r.ec == std::errc() && *r.ptr == '\0' && v > 0) ids.push_back(v);
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string_view NextField(std::string_view* s) {
  size_t b = s->find_first_not_of(' ');
  if (b == std::string_view::npos) {
    *s = {};
    return {};
  }
  s->remove_prefix(b);
  size_t e = s->find(' ');
  std::string_view f = s->substr(0, e);
  s->remove_prefix(e == std::string_view::npos ? s->size() : e);
  return f;
}

template <typename T>
bool Hex(std::string_view s, T* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool Dec(std::string_view s, uint64_t* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v, 10);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool PRead(int fd, void* buf, size_t n, uint64_t off) {
  return pread(fd, buf, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
}

// Scans the notes of one PT_NOTE segment for NT_GNU_BUILD_ID.
std::string FindBuildIdNote(const std::string& notes, size_t align) {
  size_t pos = 0;
  auto up = [align](size_t v) { return (v + align - 1) & ~(align - 1); };
  while (notes.size() - pos >= 12) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, notes.data() + pos, 4);
    std::memcpy(&descsz, notes.data() + pos + 4, 4);
    std::memcpy(&type, notes.data() + pos + 8, 4);
    size_t name_at = pos + 12;
    if (namesz > notes.size() - name_at) break;
    size_t desc_at = name_at + up(namesz);
    if (desc_at > notes.size() || descsz > notes.size() - desc_at) break;
    if (type == NT_GNU_BUILD_ID && namesz == 4 &&
        std::memcmp(notes.data() + name_at, "GNU", 4) == 0 && descsz > 0 && descsz <= 20) {
      return notes.substr(desc_at, descsz);
    }
    pos = desc_at + up(descsz);
  }
  return "";
}

constexpr uint32_t kAllPids = 0xffffffffu;  // pid -1: the kernel's maps

}  // namespace

bool ParseMapsLine(std::string_view line, MapsEntry* out) {
  MapsEntry m;
  std::string_view rest = line;
  std::string_view range = NextField(&rest);
  std::string_view perms = NextField(&rest);
  std::string_view pgoff = NextField(&rest);
  std::string_view dev = NextField(&rest);
  std::string_view ino = NextField(&rest);
  size_t dash = range.find('-');
  size_t colon = dev.find(':');
  if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() != 4 ||
      !Hex(range.substr(0, dash), &m.start) || !Hex(range.substr(dash + 1), &m.end) ||
      m.end < m.start || !Hex(pgoff, &m.pgoff) || !Hex(dev.substr(0, colon), &m.maj) ||
      !Hex(dev.substr(colon + 1), &m.min) || !Dec(ino, &m.ino)) {
    return false;
  }
  std::memcpy(m.perms, perms.data(), 4);
  size_t b = rest.find_first_not_of(' ');
  if (b != std::string_view::npos) {
    rest.remove_prefix(b);
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
    m.path.assign(rest);
  }
  *out = std::move(m);
  return true;
}

std::vector<int> ListThreads(int pid) {
  return NumericEntries("/proc/" + std::to_string(pid) + "/task");
}

std::vector<int> ListProcesses() { return NumericEntries("/proc"); }

std::string ReadComm(int pid, int tid) {
  std::string s =
      ReadSmallFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool ReadTgidPpid(int tid, int* tgid, int* ppid) {
  std::string s = ReadSmallFile("/proc/" + std::to_string(tid) + "/status", 1 << 16);
  if (s.empty()) return false;
  auto field = [&s](const char* key, int* v) {
    size_t p = s.find(key);
    if (p == std::string::npos) return false;
    p += std::strlen(key);
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
    auto r = std::from_chars(s.data() + p, s.data() + s.size(), *v);
    return r.ec == std::errc();
  };
  return field("\nTgid:", tgid) && field("\nPPid:", ppid);
}

int64_t ProcessOwner(int pid) {
  struct stat st;
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return -1;
  return st.st_uid;
}

bool ProcessAlive(int pid) {
  std::string s = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  size_t p = s.rfind(')');
  if (p == std::string::npos || p + 2 >= s.size()) return false;
  char state = s[p + 2];
  return state != 'Z' && state != 'X' && state != 'x';
}

std::string ReadElfBuildId(const std::string& path) {
  // A mapped file's path may name a FIFO by now: never block on it.
  int fd = OpenRegularFile(path);
  if (fd < 0) return "";
  std::string id;
  Elf64_Ehdr eh;
  if (PRead(fd, &eh, sizeof eh, 0) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_DATA] == ELFDATA2LSB) {
    // Program headers of either class; only their type, offset, size and alignment matter.
    struct Note {
      uint64_t off, size, align;
    };
    std::vector<Note> notes;
    if (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
      for (unsigned i = 0; i < eh.e_phnum && i < 256; ++i) {
        Elf64_Phdr ph;
        if (!PRead(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph)) break;
        if (ph.p_type == PT_NOTE) notes.push_back({ph.p_offset, ph.p_filesz, ph.p_align});
      }
    } else if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
      Elf32_Ehdr eh32;
      if (PRead(fd, &eh32, sizeof eh32, 0) && eh32.e_phentsize == sizeof(Elf32_Phdr)) {
        for (unsigned i = 0; i < eh32.e_phnum && i < 256; ++i) {
          Elf32_Phdr ph;
          if (!PRead(fd, &ph, sizeof ph, eh32.e_phoff + i * sizeof ph)) break;
          if (ph.p_type == PT_NOTE) notes.push_back({ph.p_offset, ph.p_filesz, ph.p_align});
        }
      }
    }
    for (const Note& n : notes) {
      if (n.size == 0 || n.size > (1 << 16)) continue;
      std::string data(n.size, '\0');
      if (!PRead(fd, data.data(), n.size, n.off)) continue;
      id = FindBuildIdNote(data, n.align == 8 ? 8 : 4);
      if (!id.empty()) break;
    }
  }
  close(fd);
  return id;
}

namespace {

// Sets k->start/end from the "_text" and "_etext" lines of kallsyms text
// ("ffffffff81000000 T _text").
void ScanKallsyms(std::string_view text, KernelText* k) {
  size_t pos = 0;
  while (pos < text.size() && (k->start == 0 || k->end == 0)) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.size() < sp + 3) continue;
    std::string_view name = line.substr(sp + 3);
    if (name != "_text" && name != "_etext") continue;
    uint64_t addr;
    if (Hex(line.substr(0, sp), &addr)) (name == "_text" ? k->start : k->end) = addr;
  }
}

}  // namespace

KernelText ParseKernelText(std::string_view text) {
  KernelText k;
  ScanKallsyms(text, &k);
  if (k.start == 0) k.end = 0;
  return k;
}

KernelText ReadKernelText() {
  int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  // Large reads, whole lines only (a partial line waits for the next read), and stop as
  // soon as both symbols were seen.
  KernelText k;
  std::string carry;
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    carry.append(buf.data(), static_cast<size_t>(n));
    size_t last = carry.rfind('\n');
    if (last == std::string::npos) continue;
    ScanKallsyms(std::string_view(carry.data(), last + 1), &k);
    carry.erase(0, last + 1);
    if (k.start && k.end) break;
  }
  close(fd);
  if (k.start == 0) k.end = 0;
  return k;
}

const std::string& ProcSynthesizer::BuildIdFor(int pid, const MapsEntry& m) {
  static const std::string kNone;
  if (!build_ids_ || m.ino == 0 || m.path.empty() || m.path[0] != '/' ||
      m.path.ends_with(" (deleted)")) {
    return kNone;
  }
  auto key = std::make_tuple(m.maj, m.min, m.ino);
  auto it = build_id_cache_.find(key);
  if (it != build_id_cache_.end()) return it->second;
  // Through the process's root, so a file in a container's mount namespace is found.
  std::string id = ReadElfBuildId("/proc/" + std::to_string(pid) + "/root" + m.path);
  if (id.empty()) id = ReadElfBuildId(m.path);
  return build_id_cache_.emplace(key, std::move(id)).first->second;
}

bool ProcSynthesizer::Process(int pid, const std::vector<int>& threads) {
  std::vector<int> tids = threads.empty() ? ListThreads(pid) : threads;
  if (tids.empty()) return false;
  const uint32_t p = static_cast<uint32_t>(pid);
  for (int tid : tids) {
    std::string comm = ReadComm(pid, tid);
    if (comm.empty()) continue;  // exited meanwhile
    const uint32_t t = static_cast<uint32_t>(tid);
    SynthId id{p, t, 0, 0};
    if (tid != pid) {
      writer_.WriteFork(p, p, t, p, 0, id);
      ++records_;
    }
    writer_.WriteComm(p, t, comm, false, id);
    ++records_;
  }
  std::string maps = ReadSmallFile("/proc/" + std::to_string(pid) + "/maps");
  if (maps.empty()) return true;  // a kernel thread, or gone: no user mappings
  SynthId id{p, p, 0, 0};
  std::string_view rest = maps;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    MapsEntry e;
    if (!ParseMapsLine(line, &e)) continue;
    const bool data = !e.executable();
    if (data && !(data_maps_ && e.perms[0] == 'r' && e.path.size() > 0 && e.path[0] == '/')) {
      continue;
    }
    PerfStreamWriter::Mmap2 m;
    if (data) m.misc |= PERF_RECORD_MISC_MMAP_DATA;
    m.pid = p;
    m.tid = p;
    m.start = e.start;
    m.len = e.end - e.start;
    m.pgoff = e.pgoff;
    m.maj = e.maj;
    m.min = e.min;
    m.ino = e.ino;
    m.prot = (e.perms[0] == 'r' ? PROT_READ : 0) | (e.perms[1] == 'w' ? PROT_WRITE : 0) |
             (e.perms[2] == 'x' ? PROT_EXEC : 0);
    m.flags = e.perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
    m.filename = e.path.empty() ? "//anon" : e.path;  // perf's name for anonymous code
    m.build_id = BuildIdFor(pid, e);
    writer_.WriteMmap2(m, id);
    ++records_;
  }
  return true;
}

void ProcSynthesizer::Kernel(const KernelText& text) {
  if (!text.visible()) return;
  uint64_t end = text.end > text.start ? text.end : ~uint64_t{0};
  writer_.WriteMmap(PERF_RECORD_MISC_KERNEL, kAllPids, 0, text.start, end - text.start, text.start,
                    "[kernel.kallsyms]_text");
  ++records_;
}

}  // namespace pf
