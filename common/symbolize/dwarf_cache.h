#pragma once
// A cache on disk of the DWARF images DwarfInfo builds from debug files whose sections are
// compressed (Debian's libc6-dbg and every -dbgsym package): the wanted sections inflated, as
// one ELF image. Inflating glibc's .debug_info is most of what folding a small recording with
// inline frames costs (about 10 ms of 25); a later run maps the image instead. ElfSymbols
// keeps its tables here too (entries of its own format, see elf_symbols.h), KernelSymbols
// where a kallsyms copy's core lines end (kallsyms.h), Addr2lineNames its index, and DwarfInfo
// its CU indexes and its answers (dwarf_saved.cpp).
//
// An entry is named by a hash of the debug file's identity (device, inode, size, modification
// and change times) and of what the image holds, so a changed or replaced file is never
// answered from the cache; a file without a name (a memory file) is not cached. Each entry
// ends in a trailer with its size and a checksum of its bytes (of a DWARF image, only of its
// first and last 64 KiB: its ELF header and section table); an entry that fails them is
// ignored (and replaced). Checking all of glibc's 7 MB image mapped every page of it on every
// run, where lookups read a few; the bytes the checksum skips are bounded as they are read
// (libdw, DwarfInfo's walk, each with a fuzz target), and an entry cut short by a crash fails
// its size (ext4, XFS and btrfs give a file written without fsync its new size only once its
// data is on disk). Entries are written to a temporary file and renamed, so concurrent
// runs never see half an entry. Every failure (no HOME, a read-only or full disk) just means
// no cache.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace pf {

/// The cache's directory: $PF_CACHE_DIR when it is set (empty: no cache), else
/// $XDG_CACHE_HOME/pf, else $HOME/.cache/pf; "" for no cache.
std::string CacheDir();

/// The name of the entry for the image of the open file `fd` (holding line tables or not);
/// "" when the file cannot be stat'ed or is not a regular file with a name.
std::string DwarfCacheKey(int fd, bool lines);

/// The same for another `kind` of entry about the open file `fd` (KernelSymbols: where a
/// kallsyms copy's core lines end), named with `prefix`.
std::string FileCacheKey(int fd, char prefix, uint64_t kind);

/// A copy-on-write mapping of the entry `key` under `dir` (libelf may write to the image it is
/// given): its address, with *image_size its image's bytes and *mapped_size the length to
/// munmap. Null when there is no entry or it fails its checks.
char* MapCachedImage(const std::string& dir, const std::string& key, size_t* image_size,
                     size_t* mapped_size);

/// The most the cache keeps: entries beyond it go, least recently used first.
inline constexpr uint64_t kCacheBytes = uint64_t{512} << 20;

/// The checksum of an entry covers all of it, or (checked_head given) its first
/// `checked_head` bytes and its last 64 KiB: for a large entry whose reader reads a few of its
/// pages and bounds every offset as it reads (a DWARF image: kDwarfImageCheckedHead).
inline constexpr size_t kWholeEntry = SIZE_MAX;
inline constexpr size_t kDwarfImageCheckedHead = size_t{64} << 10;

/// Stores `image` as the entry `key` under `dir` (creating the directories), then trims the
/// cache to kCacheBytes; false when it could not store it.
bool StoreCachedImage(const std::string& dir, const std::string& key, std::string_view image,
                      size_t checked_head = kWholeEntry);

/// The same without the trim: for several entries stored in a row, trimmed once after
/// (TrimCache stats every entry).
bool StoreCachedImageUntrimmed(const std::string& dir, const std::string& key,
                               std::string_view image, size_t checked_head = kWholeEntry);

/// StoreCachedImage on a thread of its own, so that the caller goes on at once; `owner` keeps
/// `image` alive, unchanged, until the entry is written. The process waits for such stores
/// when it exits (FinishCacheStores, run by atexit); where no thread can be had, the image is
/// stored before this returns.
void StoreCachedImageLater(const std::string& dir, const std::string& key,
                           std::shared_ptr<const void> owner, std::string_view image,
                           size_t checked_head = kWholeEntry);

/// Waits for the stores StoreCachedImageLater began.
void FinishCacheStores();

/// Removes the entries under `dir` least recently used first (an entry's modification time,
/// renewed at most daily when it is mapped) until they hold at most `keep_bytes`, and
/// temporary files older than an hour.
void TrimCache(const std::string& dir, uint64_t keep_bytes);

/// TrimCache, unless this did it in the last ten minutes: after storing the small entries of a
/// run's end (CU indexes and inline answers, kilobytes each), where a trim, which stats every
/// entry, cost more than the store (0.6 ms for 300 entries). The cache may outgrow
/// `keep_bytes` by what such stores add in ten minutes.
void TrimCacheNowAndThen(const std::string& dir, uint64_t keep_bytes);

}  // namespace pf
