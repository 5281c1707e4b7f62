#pragma once
// Seams for tests and fuzz targets only, kept out of CollapseOptions (the tools never set
// them).
//
// A large recording is folded in two stages on two threads: one reads the records in time
// order, the other names and folds the samples (collapse.cpp, AddPerfData). Either may unwind
// the samples' stack copies; the tools let the threads' loads decide, batch by batch. The
// tests and the perf_data_collapse fuzz target force each side in turn, so that every sample
// is seen unwound by both and the three ways are checked to fold alike.
//
// A recording's samples are keyed by their addresses in a table of bounded size, emptied when
// full (record_fold.h, SampleKeys); the tests shrink it, so that keys are forgotten and found
// fresh again.

#include <atomic>

namespace pf::test_seams {

enum class TwoStageUnwinder {
  kByLoad,         // each batch by the threads' loads (what the tools do)
  kReadingThread,  // every batch by the thread reading the records
  kFoldingThread,  // every batch by the thread folding the samples
};

/// Read by every two-stage fold as it starts a batch (process-wide).
inline std::atomic<TwoStageUnwinder> two_stage_unwinder{TwoStageUnwinder::kByLoad};

/// The most keys a recording's SampleKeys holds (0: its own kMaxKeys). Read as a fold starts
/// (process-wide).
inline std::atomic<size_t> sample_key_keys{0};

/// Forces the unwinder of the two-stage folds while it lives.
class ForceTwoStageUnwinder {
 public:
  explicit ForceTwoStageUnwinder(TwoStageUnwinder who)
      : before_(two_stage_unwinder.exchange(who)) {}
  ~ForceTwoStageUnwinder() { two_stage_unwinder.store(before_); }
  ForceTwoStageUnwinder(const ForceTwoStageUnwinder&) = delete;
  ForceTwoStageUnwinder& operator=(const ForceTwoStageUnwinder&) = delete;

 private:
  TwoStageUnwinder before_;
};

}  // namespace pf::test_seams
