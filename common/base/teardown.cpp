#include "base/teardown.h"

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

struct Kept {
  std::mutex mu;
  bool process_ends = false;
  std::vector<std::vector<std::shared_ptr<void>>> groups;
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

}  // namespace pf
