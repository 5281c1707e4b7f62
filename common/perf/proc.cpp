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

#include "base/error.h"
#include "base/regular_file.h"
#include "io/line_reader.h"
#include "elf/elf_image.h"
#include "symbolize/kallsyms.h"

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
  // Files that are not ELF (data mappings: fonts, locale archives, databases) are told by
  // their first bytes, read through a descriptor, before ElfImage maps anything of them.
  // Both open it as base/regular_file.h says: a mapped file's path may name a FIFO by now.
  int fd = OpenRegularFile(path);
  if (fd < 0) return "";
  char magic[SELFMAG];
  bool elf = pread(fd, magic, SELFMAG, 0) == SELFMAG && std::memcmp(magic, ELFMAG, SELFMAG) == 0;
  close(fd);
  if (!elf) return "";
  try {
    std::unique_ptr<elf::ElfImage> image = elf::ElfImage::Open(path);
    std::string_view id = image->BuildIdBytes();
    // An MMAP2 record holds 20 bytes (SHA-1); perf reads no longer build-id either.
    return id.size() <= 20 ? std::string(id) : std::string();
  } catch (const Error&) {
    return "";  // gone meanwhile, or not a usable ELF file
  }
}

namespace {

// Sets k->start/end from the "_text" and "_etext" lines of kallsyms text
// ("ffffffff81000000 T _text").
void ScanKallsyms(std::string_view text, KernelText* k) {
  LineSplitter lines(text);
  std::string_view line;
  KallsymsLine sym;
  while ((k->start == 0 || k->end == 0) && lines.Next(&line)) {
    if (!ParseKallsymsLine(line, &sym) || (sym.field != "_text" && sym.field != "_etext")) {
      continue;
    }
    (sym.field == "_text" ? k->start : k->end) = sym.address;
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
  LineSplitter lines(maps, LineSplitter::kKeepCr);
  std::string_view line;
  while (lines.Next(&line)) {
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
