// TuneHeap (base/heap.h): large blocks come from a heap advised for huge pages.
#include "base/heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "test_util.h"

namespace pf {
namespace {

// Without TuneHeap, glibc maps a block of 8 MB on its own, not advised (and under
// AddressSanitizer its allocator maps it): the flags tell the two apart.
TEST(Heap, TunedLargeBlocksComeFromTheAdvisedHeap) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator is its own: TuneHeap does nothing under it";
#else
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  std::unique_ptr<char[]> before(new char[8 << 20]);
  EXPECT_EQ(test::VmFlagsAt(before.get()).find(" hg "), std::string::npos);
  TuneHeap();
  std::unique_ptr<char[]> after(new char[8 << 20]);
  const std::string flags = test::VmFlagsAt(after.get());
  ASSERT_NE(flags, "") << "no mapping holds the block";
  EXPECT_NE(flags.find(" hg "), std::string::npos) << flags;
#endif
}

}  // namespace
}  // namespace pf
