#pragma once
// Which samples of a recording a reader keeps: perf script's --comms, --pid, --tid, --cpu and
// --time, with perf's syntax and in perf's order, for pf-script and pf-collapse alike.
//
// perf tests a sample in two steps (process_sample_event), and the step matters: the time
// ranges and the CPU list are tested first, before the sample's thread is looked up; the
// comm, pid and tid after, once perf has looked the thread up, which names a thread it never
// saw ":TID" (Session::Comm does the same, and a later COMM depends on it). So a reader asks
// KeepsTimeAndCpu before anything else, and KeepsThread with the thread's comm.
//
// --time takes perf's forms: "START,END" in seconds (either may be empty; up to nine decimals),
// several such ranges separated by spaces, and slices of the recording by percentages
// ("10%/2": the second tenth; "0%-10%,30%-40%"; "25%": the first quarter), which need the
// recording's first and last sample time (perf's SAMPLE_TIME feature; a pipe stream has none,
// and perf refuses them there too). --reltime (pf-script) moves the ranges by the first sample
// time, as perf does.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pfstream/perf_data.h"

namespace pf {

/// The selection as the user typed it (empty: that filter is off).
struct SelectionOptions {
  std::string comms;  // --comms: comm[,comm...]
  std::string pids;   // pid[,pid...]
  std::string tids;   // tid[,tid...]
  std::string cpus;   // --cpu: 0,2-3
  std::string time;   // --time
  bool reltime = false;  // --time is relative to the first sample (perf script --reltime)
  // The options' names in messages (pf-collapse's --pid and --tid name the first frame).
  const char* pid_option = "--pid";
  const char* tid_option = "--tid";

  /// The options given, as the user typed them: "--comms, --cpu" (empty: none).
  std::string Names() const;
};

/// One of --time's ranges, in nanoseconds; 0 leaves that end open (as in perf).
struct TimeRange {
  uint64_t start = 0, end = 0;
};

/// Parses --time's non-percent form ("START,END[ START,END...]"); throws pf::UsageError.
std::vector<TimeRange> ParseTimeRanges(std::string_view text);
/// Parses --time's percent forms against the recording's first and last sample time;
/// throws pf::UsageError.
std::vector<TimeRange> ParsePercentRanges(std::string_view text, uint64_t first,
                                          uint64_t last);

/// Throws a pf::UsageError naming `option` (--cpu, --per-cpu) when the samples of some event
/// of `reader` do not record their CPU.
void RequireSampleCpus(const PerfDataReader& reader, const std::string& option);

class SampleSelection {
 public:
  /// Keeps every sample.
  SampleSelection() = default;
  /// Parses the lists (and --time when it needs no recording); throws pf::UsageError.
  explicit SampleSelection(const SelectionOptions& options);

  /// Finishes --time and checks --cpu against the recording (perf's messages when it cannot
  /// hold them); throws pf::UsageError. Call once the reader has read its header.
  void Bind(const PerfDataReader& reader);

  /// No filter at all: every sample is kept.
  bool empty() const { return !time_cpu_ && !thread_; }
  /// Whether KeepsThread can drop a sample.
  bool filters_threads() const { return thread_; }

  /// perf's first test: the sample's time is in a range and its CPU in the list.
  bool KeepsTimeAndCpu(const Sample& s) const {
    return !time_cpu_ || (InTime(s.time) && InCpus(s.cpu));
  }
  /// perf's second: the thread's comm (as named at the sample), pid and tid.
  bool KeepsThread(const Sample& s, std::string_view comm) const;

 private:
  bool InTime(uint64_t t) const;
  bool InCpus(uint32_t cpu) const {
    return cpus_.empty() || (cpu < cpus_.size() && cpus_[cpu]);
  }

  SelectionOptions options_;
  std::vector<std::string> comms_;  // sorted
  std::vector<uint32_t> pids_, tids_;  // sorted
  std::vector<bool> cpus_;          // by CPU; empty: any
  std::vector<TimeRange> ranges_;
  bool has_time_ = false, has_cpus_ = false;
  bool time_cpu_ = false, thread_ = false;
};

}  // namespace pf
