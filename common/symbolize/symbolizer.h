#pragma once
// The front door of symbolization: names the addresses of a perf recording as `perf script`
// does. User-space addresses come as (mapping path, build-id, file offset) from MMAP2 records;
// the binary's symbols are found and read once (ElfSymbols: debug files, build-id cache, PLT
// stubs) and kept per path and build-id; a file that cannot be used is remembered as having
// no symbols and not tried again. JIT code in anonymous memory is named from
// /tmp/perf-PID.map, the vdso from perf's build-id cache or this process's own vdso, kernel
// addresses from kallsyms (read once, on first use).
//
// Names are interned: the string_views handed out stay valid for the Symbolizer's lifetime.
// A Symbolizer is not thread-safe; use one per thread.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/claim.h"
#include "base/intern.h"
#include "symbolize/elf_symbols.h"

namespace pf {

class ElfSymbols;
namespace elf {
class ElfImage;
}
class KernelSymbols;
class PerfMap;
struct EmbeddedSymbols;

/// One named address.
struct Symbol {
  std::string_view name;  ///< "" when not found
  uint64_t offset = 0;    ///< from the symbol's start
  bool found = false;
  std::string_view module;  ///< LookupKernel: the module ("" for the core kernel)
};

class Symbolizer {
 public:
  struct Options {
    /// Prefix of every binary's path (perf script --symfs).
    std::string symfs;
    /// Demangle C++/Rust names as perf does (perf script --no-demangle turns it off).
    bool demangle = true;
    /// The kernel symbol file (perf script --kallsyms).
    std::string kallsyms = "/proc/kallsyms";
    /// perf's build-id cache; "" means $HOME/.debug (when HOME is set).
    std::string build_id_cache;
    /// Set to false to never look in the build-id cache.
    bool use_build_id_cache = true;
  };

  explicit Symbolizer(Options options);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// The symbol for a user-space address inside a mapping of `path` (as in an MMAP2
  /// record: its file offset is ip - map_start + pgoff). `build_id` (hex) may be empty.
  /// `pid` lets /proc/PID/root be used (containers). Mappings perf names from a perf map
  /// (UsesPerfMap) are not found here: use LookupJit with the address itself.
  Symbol Lookup(std::string_view path, std::string_view build_id, uint64_t file_offset,
                uint32_t pid);
  /// The same in two steps, for a caller that keeps the first per mapping: the binary
  /// Lookup finds for (path, build_id, pid) (null when none can be), then a symbol in it.
  struct Binary;
  Binary* BinaryOf(std::string_view path, std::string_view build_id, uint32_t pid);
  Symbol LookupIn(Binary* binary, std::string_view path, uint64_t file_offset);
  /// Kernel addresses, from kallsyms (loaded once, lazily). perf names only addresses inside
  /// the kernel map of the recording ([kernel.kallsyms]_text MMAP: _text.._etext, shrunk to
  /// the last symbol's end) and the module maps; the caller checks that. Module symbols come
  /// with `module` set: perf prints them only when the recording has a map for the module.
  Symbol LookupKernel(uint64_t ip);
  /// An address in executable anonymous memory of process `pid`, from /tmp/perf-PID.map.
  /// `map_start` is the mapping's start (perf uses it in one odd offset; see PerfMap).
  Symbol LookupJit(uint32_t pid, uint64_t ip, uint64_t map_start = 0);

  /// True for mappings perf names from /tmp/perf-PID.map when executable: anonymous memory
  /// ("//anon", "/dev/zero", "/anon_hugepage"), "[heap]", "[stack...", "/SYSV...".
  static bool UsesPerfMap(std::string_view path);
  /// The dso name perf prints for such a mapping: "/tmp/perf-PID.map".
  static std::string PerfMapPath(uint32_t pid);

  /// True when kallsyms could not be read or had only zero addresses (kptr_restrict);
  /// loads it if needed.
  bool KernelSymbolsMissing();
  /// Symbols the recording carries (pf-record's end-of-stream table): used for binaries
  /// that cannot be read here (or whose build-id differs), and, when it has kernel symbols,
  /// for the kernel instead of this machine's kallsyms. Must outlive the symbolizer.
  void SetEmbedded(const EmbeddedSymbols* embedded) { embedded_ = embedded; }

  /// The build-id of the recorded kernel (hex): when perf's build-id cache holds its
  /// kallsyms ($HOME/.debug/[kernel.kallsyms]/ID/kallsyms), that copy is read instead of
  /// /proc/kallsyms: the recorded kernel's symbols, and no wait for the kernel to print them.
  void SetKernelBuildId(std::string build_id) { kernel_build_id_ = std::move(build_id); }

  /// The binary as the process mapped it (its code and .eh_frame, for unwinding): under
  /// --symfs or /proc/PID/root, else in perf's build-id cache; the vdso from the cache or
  /// this process's own. Null when no file with the recorded build-id is found. Cached.
  std::shared_ptr<const elf::ElfImage> RuntimeImage(std::string_view path,
                                                    std::string_view build_id, uint32_t pid);
  /// A file holding the binary's DWARF (.debug_info, for inline frames and lines): its
  /// .gnu_debuglink file, its debug file by build-id or path, perf's build-id cache, or the
  /// binary itself. "" when there is none. Cached.
  std::string DebugInfoPath(std::string_view path, std::string_view build_id, uint32_t pid);
  /// The same search under `root` ("" for this file system; --symfs), without the cache:
  /// safe to call on any thread. `build_id_cache` as in Options (resolved).
  static std::string FindDebugInfo(const std::string& root, std::string_view path,
                                   std::string_view build_id,
                                   const std::string& build_id_cache);
  /// The options, with the build-id cache's directory resolved ("" when not used).
  const Options& options() const { return options_; }

  /// What a helper thread loads ahead of need for one binary, as a process of this file
  /// system (not under /proc/PID/root) maps it: its symbols, its runtime image and where its
  /// DWARF is. The symbolizer takes each from here when it first needs it: made by the helper
  /// (waited for, if the helper has begun it) or else made on the symbolizer's thread. Its
  /// members are safe on any thread.
  class BinaryPrefetch {
   public:
    BinaryPrefetch(const Symbolizer& owner, std::string_view path, std::string_view build_id);
    ~BinaryPrefetch();
    void LoadSymbols();
    std::shared_ptr<const elf::ElfImage> RuntimeImage();
    std::string DebugInfoPath();
    /// True while a thread makes one of them (asking now would wait).
    bool Busy() const { return symbols_.Busy() || image_.Busy() || debug_path_.Busy(); }

   private:
    friend class Symbolizer;
    std::unique_ptr<ElfSymbols> TakeSymbols();
    const Options options_;
    const std::string path_, build_id_;
    const ElfLoadOptions load_;
    Claim<std::unique_ptr<ElfSymbols>> symbols_;
    Claim<std::shared_ptr<const elf::ElfImage>> image_;
    Claim<std::string> debug_path_;
  };
  /// True when process `pid` sees this file system (always with --symfs): its binaries are
  /// the ones a BinaryPrefetch loads.
  bool InThisFileSystem(uint32_t pid) { return RootOf(pid).empty(); }
  /// The BinaryPrefetch of binary (path, build_id), for a helper thread: call before the helper
  /// starts (the symbolizer keeps it). Null for a binary not looked up by path (the vdso, JIT code)
  /// or asked for already.
  BinaryPrefetch* PrefetchBinary(std::string_view path, std::string_view build_id);
  /// The binary's image as RuntimeImage finds it under `root`, uncached: safe on any thread.
  static std::shared_ptr<const elf::ElfImage> FindRuntimeImage(const Options& options,
                                                               const std::string& root,
                                                               std::string_view path,
                                                               std::string_view build_id);

  /// Starts reading kallsyms on a thread of its own (the kernel takes tens of milliseconds to
  /// print it), so that it is ready, or nearly, when the first kernel address comes. The
  /// first lookup waits for that thread if it has begun, and reads them itself if it has not
  /// (see Claim).
  void PrefetchKernelSymbols();

 public:
  struct Binary {  // (opaque to callers)
    std::unique_ptr<ElfSymbols> symbols;  // null: no symbols
    std::vector<StrId> names;             // interned display names, by SymbolIndex
    std::vector<bool> named;
  };

 private:
  Binary* FindBinary(std::string_view path, std::string_view build_id, uint32_t pid);
  static std::unique_ptr<ElfSymbols> LoadSymbols(std::string_view path,
                                                 const ElfLoadOptions& load);
  ElfLoadOptions LoadOptions(const std::string& root, std::string_view build_id) const;
  BinaryPrefetch* FindBinaryPrefetch(std::string_view path, std::string_view build_id);
  Binary* LoadVdso(std::string_view build_id);
  const std::string& RootOf(uint32_t pid);
  Symbol NameIn(Binary* binary, uint64_t file_offset);

  Options options_;
  Interner names_;
  std::vector<std::unique_ptr<Binary>> binaries_;
  std::unordered_map<std::string, Binary*> by_path_;      // root + path + '\0' + build-id
  std::string key_scratch_;                               // FindBinary's key, reused
  std::unordered_map<std::string, Binary*> by_build_id_;  // build-id
  std::unordered_map<uint32_t, std::string> roots_;       // pid -> /proc/PID/root or ""
  std::unordered_map<uint32_t, std::unique_ptr<PerfMap>> perf_maps_;  // null: none
  std::unique_ptr<KernelSymbols> kernel_;
  bool kernel_loaded_ = false;
  std::string kernel_path_;  // PrefetchKernelSymbols's choice; not changed after
  Claim<std::unique_ptr<KernelSymbols>> kernel_claim_;
  std::thread kernel_thread_;
  std::unordered_map<uint64_t, Symbol> kernel_answers_;  // by address
  const EmbeddedSymbols* embedded_ = nullptr;
  std::string kernel_build_id_;
  std::string KallsymsPath() const;
  std::unordered_map<std::string, std::shared_ptr<const elf::ElfImage>> runtime_images_;
  std::unordered_map<std::string, std::string> debug_info_paths_;
  // By path + '\0' + build-id; not changed once a helper may use them.
  std::unordered_map<std::string, std::unique_ptr<BinaryPrefetch>> binary_prefetches_;
  std::string prefetch_key_;  // FindBinaryPrefetch's key, reused
};

}  // namespace pf
