// The cache on disk (dwarf_cache.h). Entries are files named by a hash of the source file's
// identity and of what the entry holds, written to a temporary name and renamed, so a reader
// sees a whole entry or none, and never one made from another version of the file. A trailer
// at the end holds the size and a checksum that MapCachedImage checks before handing the
// mapping out. Stores may run on a thread of their own (joined at exit), so a first run does
// not wait for the disk; now and then the oldest entries are removed to keep the directory
// under its size limit.

#include "symbolize/dwarf_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "base/checksum.h"
#include "base/regular_file.h"
#include "base/teardown.h"
#include "base/thread_name.h"
#include "symbolize/cache_entry.h"

namespace pf {

namespace {

// The entries' format; a new one makes new names, and old entries are never read.
constexpr uint64_t kFormat = 1;
constexpr char kMagic[8] = {'p', 'f', 'D', 'W', 'A', 'R', 'F', '1'};

struct Trailer {
  char magic[8];
  uint64_t image_size;
  uint64_t checksum;      // ImageChecksum
  uint64_t checked_head;  // the leading bytes the checksum covers (see StoreCachedImage)
};
static_assert(sizeof(Trailer) == 32);

// XXH3 of the image: of all of it, or of its first `head` bytes and its last 64 KiB.
constexpr size_t kCheckedTail = size_t{64} << 10;
uint64_t ImageChecksum(const char* bytes, size_t size, size_t head) {
  if (size <= head || size - head <= kCheckedTail) return Checksum(bytes, size);
  return XXH3_64bits_withSeed(bytes + size - kCheckedTail, kCheckedTail, Checksum(bytes, head));
}

std::string EntryPath(const std::string& dir, const std::string& key) {
  return dir + "/dwarf/" + key + ".img";
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

std::string CacheDir() {
  if (const char* dir = std::getenv("PF_CACHE_DIR")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') {
    return std::string(xdg) + "/pf";
  }
  if (const char* home = std::getenv("HOME"); home && home[0] != '\0') {
    return std::string(home) + "/.cache/pf";
  }
  return "";
}

namespace {

// The file's identity and `kind`, hashed: "" when the file is not a regular one with a name.
std::string IdentityHash(int fd, uint64_t kind) {
  struct stat st;
  // Only a file with a name (not a memory file or a pipe): its identity outlives this process.
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink == 0) return "";
  // The change time as well as the modification time: no program can set it back.
  const uint64_t identity[] = {kFormat,
                               static_cast<uint64_t>(st.st_dev),
                               static_cast<uint64_t>(st.st_ino),
                               static_cast<uint64_t>(st.st_size),
                               static_cast<uint64_t>(st.st_mtim.tv_sec),
                               static_cast<uint64_t>(st.st_mtim.tv_nsec),
                               static_cast<uint64_t>(st.st_ctim.tv_sec),
                               static_cast<uint64_t>(st.st_ctim.tv_nsec),
                               kind};
  char name[17];
  std::snprintf(name, sizeof name, "%016" PRIx64, XXH3_64bits(identity, sizeof identity));
  return name;
}

}  // namespace

std::string DwarfCacheKey(int fd, bool lines) { return IdentityHash(fd, lines ? 1 : 0); }

std::string FileCacheKey(int fd, char prefix, uint64_t kind) {
  std::string hash = IdentityHash(fd, kind);
  return hash.empty() ? hash : prefix + hash;
}

char* MapCachedImage(const std::string& dir, const std::string& key, size_t* image_size,
                     size_t* mapped_size) {
  if (dir.empty() || key.empty()) return nullptr;
  int fd = OpenRegularFile(EntryPath(dir, key));
  if (fd < 0) return nullptr;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= static_cast<off_t>(sizeof(Trailer))) {
    close(fd);
    return nullptr;
  }
  size_t size = static_cast<size_t>(st.st_size);
  // Not populated: a write fault would copy each page, and reads map the page cache.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  char* bytes = static_cast<char*>(p);
  Trailer t;
  std::memcpy(&t, bytes + size - sizeof t, sizeof t);
  if (std::memcmp(t.magic, kMagic, sizeof kMagic) != 0 || t.image_size != size - sizeof t ||
      t.checked_head > t.image_size ||
      ImageChecksum(bytes, t.image_size, t.checked_head) != t.checksum) {
    munmap(p, size);
    close(fd);
    return nullptr;
  }
  // Used: it is the last to go when the cache is trimmed (at most once a day, one syscall).
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (now.tv_sec - st.st_mtim.tv_sec > 24 * 3600) futimens(fd, nullptr);
  close(fd);
  *image_size = t.image_size;
  *mapped_size = size;
  return bytes;
}

MappedEntry MapCachedEntry(const std::string& dir, const std::string& key) {
  size_t size = 0, mapped = 0;
  char* p = MapCachedImage(dir, key, &size, &mapped);
  if (p == nullptr) return {};
  std::shared_ptr<const char> owner(
      p, [mapped](const char* q) { UnmapWhenDone(const_cast<char*>(q), mapped); });
  return {std::move(owner), std::string_view(p, size)};
}

void TrimCache(const std::string& dir, uint64_t keep_bytes) {
  struct Entry {
    std::string path;
    uint64_t size;
    int64_t mtime;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/dwarf", ec)) {
    struct stat st;
    std::string path = e.path().string();
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    bool entry = path.size() > 4 && path.compare(path.size() - 4, 4, ".img") == 0;
    if (!entry) {
      // A temporary file a run left when it was killed while writing.
      if (now.tv_sec - st.st_mtim.tv_sec > 3600) unlink(path.c_str());
      continue;
    }
    entries.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim.tv_sec});
    total += static_cast<uint64_t>(st.st_size);
  }
  if (total <= keep_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  for (const Entry& e : entries) {
    if (total <= keep_bytes) break;
    if (unlink(e.path.c_str()) == 0) total -= e.size;
  }
}

void TrimCacheNowAndThen(const std::string& dir, uint64_t keep_bytes) {
  // The time of the last such trim: a stamp file's (not an entry; TrimCache removes it, as a
  // temporary file, when it is an hour old).
  const std::string stamp = dir + "/dwarf/trimmed";
  struct stat st;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (stat(stamp.c_str(), &st) == 0 && now.tv_sec >= st.st_mtim.tv_sec &&
      now.tv_sec - st.st_mtim.tv_sec < 600) {
    return;
  }
  TrimCache(dir, keep_bytes);
  int fd = open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    futimens(fd, nullptr);
    close(fd);
  }
}

bool StoreCachedImage(const std::string& dir, const std::string& key, std::string_view image,
                      size_t checked_head) {
  if (!StoreCachedImageUntrimmed(dir, key, image, checked_head)) return false;
  TrimCache(dir, kCacheBytes);
  return true;
}

bool StoreCachedImageUntrimmed(const std::string& dir, const std::string& key,
                               std::string_view image, size_t checked_head) {
  if (dir.empty() || key.empty() || image.empty()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir + "/dwarf", ec);
  if (ec) return false;
  std::string path = EntryPath(dir, key);
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return false;
  Trailer t;
  std::memcpy(t.magic, kMagic, sizeof kMagic);
  t.image_size = image.size();
  t.checked_head = std::min(checked_head, image.size());
  t.checksum = ImageChecksum(image.data(), image.size(), t.checked_head);
  bool ok = WriteAll(fd, image.data(), image.size()) &&
            WriteAll(fd, reinterpret_cast<const char*>(&t), sizeof t) && fchmod(fd, 0644) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

namespace {

// The threads StoreCachedImageLater started, joined at exit (registered once the list is
// built, so that the list outlives the handler).
struct PendingStores {
  std::mutex mu;
  std::vector<std::thread> threads;
};

PendingStores& Pending() {
  static PendingStores* pending = [] {
    static PendingStores stores;
    std::atexit(FinishCacheStores);
    return &stores;
  }();
  return *pending;
}

}  // namespace

void StoreCachedImageLater(const std::string& dir, const std::string& key,
                           std::shared_ptr<const void> owner, std::string_view image,
                           size_t checked_head) {
  if (dir.empty() || key.empty() || image.empty()) return;
  PendingStores& pending = Pending();
  std::lock_guard lock(pending.mu);
  try {
    pending.threads.emplace_back([dir, key, owner = std::move(owner), image,
                                  checked_head]() mutable {
      NameThisThread("pf-cache-store");
      StoreCachedImage(dir, key, image, checked_head);
      owner.reset();
    });
  } catch (const std::system_error&) {  // no thread to be had
    StoreCachedImage(dir, key, image, checked_head);
  }
}

void FinishCacheStores() {
  PendingStores& pending = Pending();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(pending.mu);
    threads.swap(pending.threads);
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace pf
