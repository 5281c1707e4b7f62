// The front door of symbolization (symbolizer.h). Each binary is found once per (root, path,
// build-id) and kept with its names interned, so the hot path (a frame whose binary is known)
// is a hash lookup and a binary search. A process in another mount namespace is resolved
// through /proc/PID/root; the vdso from perf's build-id cache or this process's own; kernel
// addresses from kallsyms, read on a thread of its own when asked ahead (PrefetchKernelSymbols)
// since the kernel takes tens of milliseconds to print it. What a helper thread loads ahead of
// need (BinaryPrefetch) is taken from it when first needed, so prefetching only saves time.

#include "symbolize/symbolizer.h"

#include <signal.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/error.h"
#include "base/regular_file.h"
#include "base/thread_name.h"
#include "io/line_reader.h"
#include "elf/elf_image.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/embedded.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"

namespace pf {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool IsVdso(std::string_view path) {
  return path == "[vdso]" || path == "[vdso32]" || path == "[vdsox32]";
}

std::string ReadLink(const std::string& path) {
  char buf[256];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The innermost pid of `pid` (its pid inside its own pid namespace), from /proc/PID/status.
uint32_t NamespacePid(uint32_t pid) {
  std::string status;
  if (!ReadRegularFile("/proc/" + std::to_string(pid) + "/status", &status)) return pid;
  LineSplitter lines(status);
  std::string_view line;
  while (lines.Next(&line)) {
    if (!StartsWith(line, "NSpid:")) continue;
    std::istringstream fields{std::string(line.substr(6))};
    uint32_t last = pid, v;
    while (fields >> v) last = v;
    return last;
  }
  return pid;
}

// This process's vdso image: from AT_SYSINFO_EHDR to the end of the [vdso] mapping.
std::string OwnVdsoImage() {
  uintptr_t start = getauxval(AT_SYSINFO_EHDR);
  if (start == 0) return {};
  std::string maps;
  if (!ReadRegularFile("/proc/self/maps", &maps)) return {};
  LineSplitter lines(maps);
  std::string_view line;
  while (lines.Next(&line)) {
    if (line.find("[vdso]") == std::string_view::npos) continue;
    uint64_t lo = 0, hi = 0;
    if (std::sscanf(std::string(line).c_str(), "%lx-%lx", &lo, &hi) != 2) return {};
    if (start < lo || start >= hi) return {};
    return std::string(reinterpret_cast<const char*>(start), hi - start);
  }
  return {};
}

}  // namespace

Symbolizer::Symbolizer(Options options) : options_(std::move(options)) {
  if (options_.use_build_id_cache && options_.build_id_cache.empty()) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
      options_.build_id_cache = std::string(home) + "/.debug";
  }
  if (!options_.use_build_id_cache) options_.build_id_cache.clear();
}

Symbolizer::~Symbolizer() {
  if (kernel_thread_.joinable()) kernel_thread_.join();
}

bool Symbolizer::UsesPerfMap(std::string_view path) {
  return path == "//anon" || StartsWith(path, "/dev/zero") || StartsWith(path, "/anon_hugepage") ||
         StartsWith(path, "[stack") || StartsWith(path, "/SYSV") || path == "[heap]";
}

std::string Symbolizer::PerfMapPath(uint32_t pid) {
  return "/tmp/perf-" + std::to_string(pid) + ".map";
}

const std::string& Symbolizer::RootOf(uint32_t pid) {
  static const std::string kNone;
  if (pid == 0 || !options_.symfs.empty()) return kNone;
  auto it = roots_.find(pid);
  if (it != roots_.end()) return it->second;
  std::string root;
  // Most of a system-wide recording's processes have ended, and a look-up of each in /proc
  // costs a path walk (a 6.6 MB recording: 890 of them, 5% of its fold); a signal 0 only
  // asks whether the process is there.
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    return roots_.emplace(pid, std::move(root)).first->second;
  }
  std::string proc = "/proc/" + std::to_string(pid);
  std::string theirs = ReadLink(proc + "/ns/mnt");
  if (!theirs.empty() && theirs != ReadLink("/proc/self/ns/mnt")) root = proc + "/root";
  return roots_.emplace(pid, std::move(root)).first->second;
}

Symbolizer::Binary* Symbolizer::LoadVdso(std::string_view build_id) {
  std::string key = std::string("[vdso]") + '\0' + std::string(build_id);
  if (auto it = by_path_.find(key); it != by_path_.end()) return it->second;
  auto binary = std::make_unique<Binary>();
  // perf keeps the recorded vdso in its build-id cache; else this machine's vdso is the one
  // when the build-ids agree (or none was recorded).
  if (!build_id.empty() && !options_.build_id_cache.empty() && build_id.size() > 2) {
    std::string path = options_.build_id_cache + "/.build-id/" +
                       std::string(build_id.substr(0, 2)) + "/" + std::string(build_id.substr(2)) +
                       "/vdso";
    try {
      binary->symbols = ElfSymbols::FromFile(path, options_.demangle);
    } catch (const Error&) {
    }
  }
  if (binary->symbols == nullptr) {
    std::string image = OwnVdsoImage();
    if (!image.empty()) {
      try {
        auto own = ElfSymbols::FromImage(image, "[vdso]", options_.demangle);
        if (build_id.empty() || StartsWith(build_id, own->build_id()))
          binary->symbols = std::move(own);
      } catch (const Error&) {
      }
    }
  }
  Binary* raw = binary.get();
  binaries_.push_back(std::move(binary));
  by_path_.emplace(key, raw);
  return raw;
}

// Null when there are none: every address in it is [unknown], as in perf.
std::unique_ptr<ElfSymbols> Symbolizer::LoadSymbols(std::string_view path,
                                                    const ElfLoadOptions& load) {
  try {
    return ElfSymbols::Load(path, load);
  } catch (const Error&) {
    return nullptr;
  }
}

ElfLoadOptions Symbolizer::LoadOptions(const std::string& root, std::string_view build_id) const {
  ElfLoadOptions load;
  load.symfs = options_.symfs.empty() ? root : options_.symfs;
  load.build_id = std::string(build_id);
  load.build_id_cache = options_.build_id_cache;
  load.demangle = options_.demangle;
  return load;
}

Symbolizer::BinaryPrefetch::BinaryPrefetch(const Symbolizer& owner, std::string_view path,
                                           std::string_view build_id)
    : options_(owner.options_),
      path_(path),
      build_id_(build_id),
      load_(owner.LoadOptions("", build_id)) {}

Symbolizer::BinaryPrefetch::~BinaryPrefetch() = default;

void Symbolizer::BinaryPrefetch::LoadSymbols() {
  symbols_.Offer([this] { return Symbolizer::LoadSymbols(path_, load_); });
}

std::unique_ptr<ElfSymbols> Symbolizer::BinaryPrefetch::TakeSymbols() {
  return std::move(symbols_.Get([this] { return Symbolizer::LoadSymbols(path_, load_); }));
}

std::shared_ptr<const elf::ElfImage> Symbolizer::BinaryPrefetch::RuntimeImage() {
  return image_.Get([this] { return FindRuntimeImage(options_, "", path_, build_id_); });
}

std::string Symbolizer::BinaryPrefetch::DebugInfoPath() {
  return debug_path_.Get(
      [this] { return FindDebugInfo(options_.symfs, path_, build_id_, options_.build_id_cache); });
}

Symbolizer::BinaryPrefetch* Symbolizer::PrefetchBinary(std::string_view path,
                                                       std::string_view build_id) {
  if (path.empty() || path[0] != '/' || UsesPerfMap(path)) return nullptr;
  std::string key = std::string(path) + '\0' + std::string(build_id);
  auto [it, added] = binary_prefetches_.try_emplace(std::move(key));
  if (!added) return nullptr;
  it->second = std::make_unique<BinaryPrefetch>(*this, path, build_id);
  return it->second.get();
}

Symbolizer::BinaryPrefetch* Symbolizer::FindBinaryPrefetch(std::string_view path,
                                                           std::string_view build_id) {
  if (binary_prefetches_.empty()) return nullptr;
  prefetch_key_.assign(path).push_back('\0');
  prefetch_key_.append(build_id);
  auto it = binary_prefetches_.find(prefetch_key_);
  return it == binary_prefetches_.end() ? nullptr : it->second.get();
}

Symbolizer::Binary* Symbolizer::FindBinary(std::string_view path, std::string_view build_id,
                                           uint32_t pid) {
  if (IsVdso(path)) return LoadVdso(build_id);
  const std::string& root = RootOf(pid);
  // Asked for every frame: the key is built in a buffer kept across calls (no allocation).
  std::string& key = key_scratch_;
  key.assign(root).append(path).push_back('\0');
  key.append(build_id);
  if (auto it = by_path_.find(key); it != by_path_.end()) return it->second;
  if (!build_id.empty()) {
    if (auto it = by_build_id_.find(std::string(build_id)); it != by_build_id_.end()) {
      by_path_.emplace(key, it->second);
      return it->second;
    }
  }

  auto binary = std::make_unique<Binary>();
  BinaryPrefetch* prefetch = root.empty() ? FindBinaryPrefetch(path, build_id) : nullptr;
  binary->symbols =
      prefetch ? prefetch->TakeSymbols() : LoadSymbols(path, LoadOptions(root, build_id));
  Binary* raw = binary.get();
  binaries_.push_back(std::move(binary));
  by_path_.emplace(key, raw);
  if (!build_id.empty() && raw->symbols != nullptr)
    by_build_id_.emplace(std::string(build_id), raw);
  return raw;
}

Symbol Symbolizer::NameIn(Binary* binary, uint64_t file_offset) {
  Symbol out;
  if (binary == nullptr || binary->symbols == nullptr) return out;
  SymbolIndex index;
  uint64_t offset;
  if (!binary->symbols->Find(file_offset, &index, &offset)) return out;
  if (binary->names.empty()) {
    binary->names.resize(binary->symbols->size());
    binary->named.resize(binary->symbols->size(), false);
  }
  if (!binary->named[index.index()]) {
    binary->names[index.index()] = names_.Intern(binary->symbols->Name(index));
    binary->named[index.index()] = true;
  }
  out.name = names_.Name(binary->names[index.index()]);
  out.offset = offset;
  out.found = true;
  return out;
}

Symbol Symbolizer::Lookup(std::string_view path, std::string_view build_id, uint64_t file_offset,
                          uint32_t pid) {
  if (UsesPerfMap(path)) return {};
  return LookupIn(BinaryOf(path, build_id, pid), path, file_offset);
}

Symbolizer::Binary* Symbolizer::BinaryOf(std::string_view path, std::string_view build_id,
                                         uint32_t pid) {
  return UsesPerfMap(path) ? nullptr : FindBinary(path, build_id, pid);
}

Symbol Symbolizer::LookupIn(Binary* binary, std::string_view path, uint64_t file_offset) {
  Symbol s = NameIn(binary, file_offset);
  if (!s.found && embedded_) {
    uint64_t start;
    if (const EmbeddedSymbols::Range* r = embedded_->Find(std::string(path), file_offset, &start)) {
      s.name = names_.Name(names_.Intern(r->name));
      s.offset = file_offset - start;
      s.found = true;
    }
  }
  return s;
}

namespace {
std::unique_ptr<KernelSymbols> LoadKernelSymbols(const std::string& path) {
  try {
    return std::make_unique<KernelSymbols>(KernelSymbols::Load(path));
  } catch (const Error&) {
    return std::make_unique<KernelSymbols>();
  }
}
}  // namespace

std::string Symbolizer::KallsymsPath() const {
  if (!kernel_build_id_.empty() && !options_.build_id_cache.empty() &&
      options_.kallsyms == "/proc/kallsyms") {
    std::string cached =
        options_.build_id_cache + "/[kernel.kallsyms]/" + kernel_build_id_ + "/kallsyms";
    if (access(cached.c_str(), R_OK) == 0) return cached;
  }
  return options_.kallsyms;
}

void Symbolizer::PrefetchKernelSymbols() {
  if (kernel_loaded_ || !kernel_path_.empty()) return;
  kernel_path_ = KallsymsPath();
  try {
    kernel_thread_ = std::thread([this] {
      NameThisThread("pf-kallsyms");
      kernel_claim_.Offer([this] { return LoadKernelSymbols(kernel_path_); });
    });
  } catch (const std::system_error&) {  // no thread to be had: read when first needed
  }
}

bool Symbolizer::KernelSymbolsMissing() {
  if (!kernel_loaded_) {
    kernel_loaded_ = true;
    kernel_ = std::move(kernel_claim_.Get([this] {
      return LoadKernelSymbols(kernel_path_.empty() ? KallsymsPath() : kernel_path_);
    }));
  }
  return kernel_->empty();
}

Symbol Symbolizer::LookupKernel(uint64_t ip) {
  Symbol out;
  if (embedded_ && !embedded_->kernel.empty()) {  // the recording machine's kernel
    uint64_t start;
    if (const EmbeddedSymbols::Range* r = embedded_->FindKernel(ip, &start)) {
      out.name = names_.Name(names_.Intern(r->name));
      out.module = names_.Name(names_.Intern(r->module));
      out.offset = ip - start;
      out.found = true;
    }
    return out;
  }
  if (KernelSymbolsMissing()) return out;
  // A kallsyms lookup reads a few dozen lines of text; the same addresses come again and
  // again.
  auto [it, added] = kernel_answers_.try_emplace(ip);
  if (!added) return it->second;
  KernelSymbols::Hit hit;
  if (kernel_->Lookup(ip, &hit)) {
    out.name = hit.name;
    out.module = hit.module;
    out.offset = hit.offset;
    out.found = true;
  }
  it->second = out;
  return out;
}

Symbol Symbolizer::LookupJit(uint32_t pid, uint64_t ip, uint64_t map_start) {
  auto it = perf_maps_.find(pid);
  if (it == perf_maps_.end()) {
    std::unique_ptr<PerfMap> map;
    std::string root = RootOf(pid);
    std::vector<std::string> paths;
    if (!root.empty()) paths.push_back(root + PerfMapPath(NamespacePid(pid)));
    paths.push_back(PerfMapPath(pid));
    for (const std::string& p : paths) {
      try {
        map = PerfMap::Load(p);
        break;
      } catch (const Error&) {
      }
    }
    it = perf_maps_.emplace(pid, std::move(map)).first;
  }
  Symbol out;
  if (it->second == nullptr) return out;
  if (!it->second->Lookup(ip, &out.name, &out.offset, map_start)) return out;
  out.found = true;
  return out;
}

std::shared_ptr<const elf::ElfImage> Symbolizer::RuntimeImage(std::string_view path,
                                                              std::string_view build_id,
                                                              uint32_t pid) {
  std::string root = IsVdso(path) ? std::string() : RootOf(pid);
  std::string key = root + std::string(path) + '\0' + std::string(build_id);
  if (auto it = runtime_images_.find(key); it != runtime_images_.end()) return it->second;
  BinaryPrefetch* prefetch = root.empty() ? FindBinaryPrefetch(path, build_id) : nullptr;
  std::shared_ptr<const elf::ElfImage> found =
      prefetch ? prefetch->RuntimeImage() : FindRuntimeImage(options_, root, path, build_id);
  runtime_images_.emplace(std::move(key), found);
  return found;
}

std::shared_ptr<const elf::ElfImage> Symbolizer::FindRuntimeImage(const Options& options,
                                                                  const std::string& root,
                                                                  std::string_view path,
                                                                  std::string_view build_id) {
  std::vector<std::string> candidates;
  std::string cache_dir;
  if (build_id.size() > 2 && !options.build_id_cache.empty()) {
    cache_dir = options.build_id_cache + "/.build-id/" + std::string(build_id.substr(0, 2)) + "/" +
                std::string(build_id.substr(2));
  }
  if (IsVdso(path)) {
    if (!cache_dir.empty()) candidates.push_back(cache_dir + "/vdso");
  } else if (!path.empty() && path[0] == '/') {
    candidates.push_back((options.symfs.empty() ? root : options.symfs) + std::string(path));
    if (!cache_dir.empty()) {
      candidates.push_back(cache_dir + "/elf");
      candidates.push_back(cache_dir);  // the old cache layout: the link is the file
    }
  }
  std::shared_ptr<const elf::ElfImage> found;
  for (const std::string& c : candidates) {
    if (!IsRegularFile(c)) continue;
    try {
      std::shared_ptr<const elf::ElfImage> image = elf::ElfImage::Open(c);
      if (!build_id.empty() && !elf::BuildIdMatches(build_id, image->BuildId())) continue;
      found = std::move(image);
      break;
    } catch (const Error&) {
    }
  }
  if (!found && IsVdso(path)) {
    std::string image = OwnVdsoImage();
    if (!image.empty()) {
      try {
        std::shared_ptr<const elf::ElfImage> own = elf::ElfImage::FromBytes(image, "[vdso]");
        if (build_id.empty() || elf::BuildIdMatches(build_id, own->BuildId())) found = own;
      } catch (const Error&) {
      }
    }
  }
  return found;
}

std::string Symbolizer::DebugInfoPath(std::string_view path, std::string_view build_id,
                                      uint32_t pid) {
  if (IsVdso(path) || path.empty() || path[0] != '/') return {};
  std::string root = options_.symfs.empty() ? RootOf(pid) : options_.symfs;
  std::string key = root + std::string(path) + '\0' + std::string(build_id);
  if (auto it = debug_info_paths_.find(key); it != debug_info_paths_.end()) return it->second;
  BinaryPrefetch* prefetch = RootOf(pid).empty() ? FindBinaryPrefetch(path, build_id) : nullptr;
  std::string found = prefetch ? prefetch->DebugInfoPath()
                               : FindDebugInfo(root, path, build_id, options_.build_id_cache);
  debug_info_paths_.emplace(std::move(key), found);
  return found;
}

std::string Symbolizer::FindDebugInfo(const std::string& root, std::string_view path,
                                      std::string_view build_id,
                                      const std::string& build_id_cache) {
  if (IsVdso(path) || path.empty() || path[0] != '/') return {};
  std::string real = root + std::string(path);
  std::string own_id = std::string(build_id), debuglink;
  std::string file_id;
  bool readable = ReadElfIdentity(real, &file_id, &debuglink);
  if (own_id.empty()) own_id = file_id;
  std::vector<std::string> candidates;
  size_t slash = real.rfind('/');
  std::string dir = slash == std::string::npos ? "." : real.substr(0, slash);
  if (readable && !debuglink.empty()) {
    size_t pslash = path.rfind('/');
    std::string pdir(path.substr(0, pslash == std::string_view::npos ? 0 : pslash));
    candidates.push_back(dir + "/" + debuglink);
    candidates.push_back(dir + "/.debug/" + debuglink);
    candidates.push_back(root + "/usr/lib/debug" + pdir + "/" + debuglink);
  }
  if (own_id.size() > 2) {
    std::string tail = own_id.substr(0, 2) + "/" + own_id.substr(2);
    if (readable && !file_id.empty() && elf::BuildIdMatches(own_id, file_id)) {
      tail = file_id.substr(0, 2) + "/" + file_id.substr(2);
    }
    candidates.push_back(root + "/usr/lib/debug/.build-id/" + tail + ".debug");
    if (!build_id_cache.empty()) {
      candidates.push_back(build_id_cache + "/.build-id/" + tail + "/debug");
      candidates.push_back(build_id_cache + "/.build-id/" + tail + "/elf");
    }
  }
  candidates.push_back(root + "/usr/lib/debug" + std::string(path) + ".debug");
  candidates.push_back(real);
  for (const std::string& c : candidates) {
    if (!IsRegularFile(c)) continue;
    try {
      std::unique_ptr<elf::ElfImage> image = elf::ElfImage::Open(c);
      if (!own_id.empty() && !elf::BuildIdMatches(own_id, image->BuildId())) continue;
      if (image->FindSection(".debug_info") < 0) continue;
      return c;
    } catch (const Error&) {
    }
  }
  return {};
}

}  // namespace pf
