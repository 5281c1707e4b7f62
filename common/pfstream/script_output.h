#pragma once
// `perf script` text from a recording: the default output of perf script 6.1 (sample header,
// then the callchain, one frame a line: address, sym+0xoff, (dso); a blank line after each
// sample), with -F field selection and the mmap/task event lines. Every existing consumer of
// perf script text (stackcollapse-perf.pl, pf-collapse, speedscope, ...) reads it.

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "io/output.h"
#include "pfstream/perf_data.h"
#include "pfstream/sample_selection.h"
#include "pfstream/session.h"

namespace pf {

struct ScriptOptions {
  std::string symfs;  // --symfs: look binaries up under this root
  /// Fields as perf script -F names them; empty = perf's default for the recording.
  std::vector<std::string> fields;
  bool show_mmap_events = false;
  bool show_task_events = false;
  bool header = false;
  UnwindMethod unwind_method = UnwindMethod::kTable;
  bool inline_frames = true;  // --no-inline clears it
  /// perf script's filters: --comms, --pid, --tid, --cpu, --time (and --reltime).
  SelectionOptions select;
  /// -S: only samples whose symbol (of the sampled address) is one of these, or whose
  /// symbol starts or whose address is at one of the hex addresses among them.
  std::vector<std::string> symbols;
  /// --max-stack: frames of a call chain resolved at most (perf's default: the kernel's
  /// perf_event_max_stack, 127), separately for the recorded and the unwound part.
  size_t max_stack = 127;
  bool ns = false;               // --ns: times in nanoseconds
  bool demangle = true;          // --no-demangle clears it
  bool hide_call_graph = false;  // -G: the sample's own symbol on its line, no call chain
};

/// Which fields to print, resolved against the recording (perf drops fields the samples do
/// not carry, and refuses an explicit -F field they lack).
struct ScriptFields {
  bool comm = true, pid = false, tid = true, cpu = false, time = true, period = true,
       event = true, ip = true, sym = true, symoff = true, dso = true, srcline = false;
  bool trace = false;  // a tracepoint's fields, after its event name (its recording's formats)
  int name_width = 0;  // event names are right-aligned to the longest one (perf)
  bool ns = false;     // the time to the nanosecond (--ns)
  bool hide_call_graph = false;  // -G: printed as a sample without a call chain
  // The chain could not be resolved (perf --max-stack 0 on a stack copy): the comm as with a
  // chain, the sample's own frame on its line.
  bool chain_unresolved = false;
};

/// Checks -F's names before a recording is read: throws pf::UsageError on a name perf does not
/// know either, or on +FIELD/-FIELD mixed with a plain list.
void CheckFieldNames(const std::vector<std::string>& fields);

/// Resolves the options' fields for `attr` (in a recording read from a pipe when `pipe`);
/// throws pf::UsageError (perf's message) when an explicit field is not in the samples. A
/// field perf knows and pf does not print is left out, with perf's kind of warning added to
/// *warnings.
ScriptFields ResolveFields(const ScriptOptions& options, const EventAttr& attr, bool pipe,
                           std::vector<std::string>* warnings = nullptr);

/// perf script's default fields for a tracepoint's samples: its fields after the event name,
/// no period, and the frames only of a call chain: their address, name, offset and dso, or in
/// a pipe (where perf sets them as each event arrives) address and name alone; in a file,
/// none once -F changed the fields (`fields_given`).
void SetTracepointFields(ScriptFields* f, const EventAttr& attr, bool pipe,
                         bool fields_given = false);

/// Appends the perf script text of one sample: its header line, then (with a callchain) a
/// line per frame and a blank line. `chain` is the sample's Session::Callchain (unwound once
/// by the caller, which may key on it); `frames` is scratch space.
void AppendSampleText(Session& session, const Sample& s, std::span<const uint64_t> chain,
                      const ScriptFields& fields, std::vector<ResolvedFrame>* frames,
                      std::string* out);
/// AppendSampleText with the sample's frames already resolved (Session::Frames of its chain).
void AppendResolvedSample(Session& session, const Sample& s, const ScriptFields& fields,
                          const std::vector<ResolvedFrame>& frames, std::string* out);
/// The part of AppendSampleText's header line before the frames: comm, ids, time, period,
/// event (the whole line when the sample has a callchain field, less its newline).
void AppendSampleHead(Session& session, const Sample& s, const ScriptFields& fields,
                      std::string* out);

/// Delivers every record of `reader` in time order, as perf script does (its
/// ordered_events: at each FINISHED_ROUND, the records up to the previous round's latest time
/// are sorted and delivered; the rest at the end). A mapped file's pages before the earliest
/// record still queued are given back as it goes, or, with `release`, handed to it instead
/// (for a caller that reads the records delivered later, on another thread).
void ReplayOrdered(PerfDataReader& reader, const std::function<void(const Record&)>& deliver,
                   const std::function<void(const uint8_t*)>& release = {});

/// Replays `reader` through `session` and writes perf script text to `out`.
/// Returns the number of samples printed.
uint64_t WriteScript(PerfDataReader& reader, Session& session, const ScriptOptions& options,
                     BufferedWriter& out, std::vector<std::string>* warnings = nullptr);

}  // namespace pf
