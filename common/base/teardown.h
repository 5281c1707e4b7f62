#pragma once
// Skipping the teardown of what a run built, when the process ends right after the run.
//
// Folding a small recording takes 10-15 ms, and about 1 ms of it was destructors: libdw's
// trees freed node by node, every ELF image and DWARF cache entry unmapped one at a time (each
// munmap a TLB shootdown once a second thread has run). When the process exits, the kernel
// takes all of that back at once. So a tool's main (cli::Tool::Run) says the process ends
// after its work, and the readers of recordings hand their Symbolizer and Session to
// KeepUntilExit instead of destroying them. Without that call (the library in tests, in
// other programs) and under AddressSanitizer, which is to see every destructor run, they
// are destroyed at once, as before.

#include <cstddef>
#include <memory>
#include <vector>

namespace pf {

/// The process exits when the current work is done (a tool's main says so; tests may take it
/// back). No effect under AddressSanitizer.
void SetProcessEndsAfterWork(bool ends);

/// Destroys the objects in the order given, or keeps them until the process ends when it
/// ends after its work. At most a few groups are kept (a run with many inputs destroys the
/// rest at once), so memory stays bounded.
void KeepGroupUntilExit(std::vector<std::shared_ptr<void>> group);

/// Unmaps [p, p + bytes) now, or, when the process ends after its work, leaves it to the
/// exit, which takes every mapping back at once: an munmap while other threads run costs a
/// TLB shootdown on each CPU they run on (the helpers' file mappings cost about 0.5 ms a
/// run). At most a few hundred mappings and 1 GiB are left; later ones go at once.
void UnmapWhenDone(void* p, size_t bytes);

template <typename... T>
void KeepUntilExit(std::unique_ptr<T>&&... objects) {
  std::vector<std::shared_ptr<void>> group;
  (group.push_back(std::shared_ptr<void>(std::move(objects))), ...);
  KeepGroupUntilExit(std::move(group));
}

}  // namespace pf
