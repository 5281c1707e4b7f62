#pragma once
// The app module (common/app/): the top layer, what each tool does with its files. Only here
// do paths become inputs of any format: the entry points below open files (or stdin, "-"),
// hand them to the collapse module, which reads every format pf knows, and pass the stack
// tree to a view (render, callgraph, diff) or print a recording (pfstream). The modules
// below never open a file by name, so drawing a flame graph from a stack tree links neither
// the unwinder nor the symbolizer.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collapse/collapse.h"
#include "diff/diff.h"
#include "io/output.h"
#include "pfstream/script_output.h"
#include "render/flame.h"
#include "stacks/read_report.h"

namespace pf {

/// Folds `inputs` (opened in order; none or "-" is stdin) into a stack tree (pf-flamegraph,
/// pf-dot). Throws pf::Error for unreadable or unusable input.
StackTree CollapseFilesToTree(const std::vector<std::string>& inputs,
                              const CollapseOptions& options, ReadReport* report);

/// Folds `sources`, opened by the caller, into a stack tree (CollapseFilesToTree's second
/// half: pf-dot opens its inputs to choose between stacks and callgrind's call edges).
StackTree CollapseSourcesToTree(std::vector<std::unique_ptr<ByteSource>>& sources,
                                const CollapseOptions& options, ReadReport* report);

/// True when `src` is folded text whose bytes stay put (a mapped file: stable), as the paths
/// that draw, merge or compare folded files without a stack tree need; the format is judged
/// from the first 64 KiB (SniffFormat).
bool IsMappedFolded(ByteSource& src);

/// pf-collapse: folds `inputs` and writes sorted folded text to `out`.
void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, ReadReport* report);

/// pf-collapse --format=pprof|callgrind: folds `inputs` and writes the profile in that
/// format (formats/pprof_writer.h, gzipped when `gzip`; callgraph/callgrind_writer.h) to
/// `out`, and commits it.
void CollapseFilesAs(const std::string& format, bool gzip,
                     const std::vector<std::string>& inputs, const CollapseOptions& options,
                     ByteSink& out, ReadReport* report);

/// pf-flamegraph: reads the inputs (folded stacks, or anything pf-collapse reads) and lays
/// out their flame graph. A single sorted folded file streams straight into the frame merger
/// (StreamSortedFolded), so memory follows the frames drawn, not the file; anything else is
/// folded into a stack tree first.
/// `read` says how inputs are read (-f, --value, ...).
FlameLayout BuildFlameGraphFromFiles(const std::vector<std::string>& inputs,
                                     const FlameOptions& options,
                                     std::vector<std::string>* warnings, ReadReport* report,
                                     const CollapseOptions& read = {});

/// pf-flamegraph --flamechart: reads folded files in order and draws their flame chart.
FlameLayout BuildFlameChartFromFiles(const std::vector<std::string>& inputs,
                                     const FlameOptions& options,
                                     std::vector<std::string>* warnings,
                                     const CollapseOptions& read = {});

/// pf-diff: writes the differential profile (or the report) of `before` and `after`.
void DiffFiles(const std::string& before, const std::string& after, const DiffOptions& options,
               ByteSink& out, ReadReport* report, const CollapseOptions& read = {});

/// What RunScript tells its caller to warn about.
struct ScriptReport {
  bool truncated = false;             ///< the recording was cut short
  std::string truncated_warning;      ///< TruncatedWarning, when truncated
  std::string skipped;                ///< SkippedRecordsWarning, "" when no record was skipped
  std::vector<std::string> warnings;  ///< fields -F asked for that are not printed
};

/// pf-script: reads the recording at `path` ("-" = stdin), writes its perf script text.
/// Returns the number of samples; fills *report when given.
uint64_t RunScript(const std::string& path, const ScriptOptions& options, ByteSink& out,
                   ScriptReport* report);

}  // namespace pf
