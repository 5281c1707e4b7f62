#pragma once
// Reading other profilers' formats (base/input_formats.h from "pprof" on): each reader turns
// one input into a stack tree with its sample types and units, and the Collapser merges it
// with the others like any input. The readers themselves live in the lowest module that can
// hold them (formats/ for text, above symbolize for those that need symbols); this file only
// chooses one by format and holds the options they share.

#include <string>
#include <vector>

#include "formats/perf_script.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"
#include "symbolize/symbolizer.h"

namespace pf {

/// What the readers of other profilers' formats take from the command line.
struct ProfileOptions {
  /// Labels (pprof) turned into frames, as pprof's -tagroot: "thread" adds a frame
  /// "thread:NAME" above each stack that carries the label.
  std::vector<std::string> tags;
  /// The massif snapshot: "peak" (the default), "last" or a snapshot number.
  std::string snapshot = "peak";
  /// How frames named from addresses are written (--inline, --addrs, --no-inline): the
  /// Collapser's perf script options (null: the defaults).
  const PerfScriptOptions* perf = nullptr;
};

/// Reads `source`, an input of format `format` (one of the other profilers' formats), into a
/// tree of its own; `symbols` says where binaries are looked for when a profile's addresses
/// need names (gperftools, pprof without functions). Throws pf::Error for unreadable or unusable input; counted skips and
/// approximations go to `report`.
StackTree ReadProfile(InputFormat format, ByteSource& source, const ProfileOptions& options,
                      const Symbolizer::Options& symbols, ReadReport* report);

}  // namespace pf
