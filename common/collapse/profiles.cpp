// Choosing the reader of another profiler's format (collapse/profiles.h).

#include "collapse/profiles.h"

#include "base/error.h"
#include "collapse/pprof_read.h"
#include "formats/trace_stacks.h"

namespace pf {

StackTree ReadProfile(InputFormat format, ByteSource& source, const ProfileOptions& options,
                      const Symbolizer::Options& symbols, ReadReport* report) {
  (void)options;
  (void)symbols;
  (void)report;
  switch (format) {
    case InputFormat::kPprof:
      return ReadPprof(source, options.tags, symbols, report);
    case InputFormat::kBpftrace:
    case InputFormat::kBcc:
    case InputFormat::kDtrace:
    case InputFormat::kStap:
      return ReadTraceStacks(format, source, report);
    default:
      break;
  }
  throw Error(source.name(), std::string("pf cannot read ") + FormatName(format) + " yet");
}

}  // namespace pf
