#pragma once
// Stack text of tracing tools: bpftrace maps, bcc's profile and offcputime (without -f),
// DTrace and SystemTap aggregations. All four print a stack leaf first, one frame a line,
// and then its count; they differ in how a frame is written and where a stack ends, so one
// reader takes them all, with a small frame rule per tool. Each equals FlameGraph's
// collapser for it (stackcollapse-bpftrace.pl, stackcollapse.pl, stackcollapse-stap.pl) or,
// for bcc, which has none, bcc's own folded output (`profile -f`); man/pf-collapse.1
// ("INPUT FORMATS") says where pf differs and why.

#include "formats/sniff.h"
#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"

namespace pf {

/// Whether `format` is one of the tracing tools' stack texts ReadTraceStacks reads.
bool IsTraceStacks(InputFormat format);

/// Reads `source`, the text of `format` (kBpftrace, kBcc, kDtrace or kStap), into a tree of
/// one column: samples (bpftrace, bcc profile, DTrace and SystemTap counts), or nanoseconds
/// for bcc's offcputime (its microseconds times 1000). Entries that hold no count are
/// skipped and counted in `report`; an input with no stack at all is a pf::Error.
StackTree ReadTraceStacks(InputFormat format, ByteSource& source, ReadReport* report);

}  // namespace pf
