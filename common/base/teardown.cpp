// What a run keeps until the process exits (teardown.h). A process-wide, never-destroyed list
// holds the groups handed to KeepGroupUntilExit and counts the mappings UnmapWhenDone leaves in
// place, under one mutex (these calls are rare: once a run, once a mapping). Both are bounded
// (a few groups, 256 mappings, 1 GiB) so that a long-lived caller that forgets to say the
// process ends cannot grow without limit, and both fall back to destroying at once when the
// process does not end after its work or when AddressSanitizer must see every destructor.

#include "base/teardown.h"

#include <sys/mman.h>

#include <mutex>
#include <vector>

namespace pf {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr size_t kGroupsKept = 4;
constexpr size_t kMappingsKept = 256;
constexpr size_t kMappedBytesKept = size_t{1} << 30;

struct Kept {
  std::mutex mu;
  bool process_ends = false;
  std::vector<std::vector<std::shared_ptr<void>>> groups;
  size_t mappings = 0, mapped_bytes = 0;
};

// Never destroyed: what it holds is the kernel's to take back.
Kept& State() {
  static Kept* kept = new Kept;
  return *kept;
}

}  // namespace

void SetProcessEndsAfterWork(bool ends) {
  Kept& k = State();
  std::lock_guard<std::mutex> lock(k.mu);
  k.process_ends = ends && !kSanitized;
}

void KeepGroupUntilExit(std::vector<std::shared_ptr<void>> group) {
  {
    Kept& k = State();
    std::lock_guard<std::mutex> lock(k.mu);
    if (k.process_ends && k.groups.size() < kGroupsKept) {
      k.groups.push_back(std::move(group));
      return;
    }
  }
  for (std::shared_ptr<void>& p : group) p.reset();  // in the order given
}

void UnmapWhenDone(void* p, size_t bytes) {
  if (p == nullptr) return;
  {
    Kept& k = State();
    std::lock_guard<std::mutex> lock(k.mu);
    if (k.process_ends && k.mappings < kMappingsKept && bytes <= kMappedBytesKept - k.mapped_bytes) {
      ++k.mappings;
      k.mapped_bytes += bytes;
      return;
    }
  }
  munmap(p, bytes);
}

}  // namespace pf
