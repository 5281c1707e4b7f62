#pragma once
// Names for the helper threads, as top -H, perf top and gdb show them: a run's CPU time split
// by thread says which stage to look at (pf-read, pf-prefetch, ...).

#include <pthread.h>

namespace pf {

/// Names the calling thread; `name` has at most 15 characters (the kernel's limit). A name
/// the kernel refuses is no error: the thread keeps its program's name.
inline void NameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace pf
