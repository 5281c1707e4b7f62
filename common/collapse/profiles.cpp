// Choosing the reader of another profiler's format (collapse/profiles.h).

#include "collapse/profiles.h"

#include "base/error.h"
#include "collapse/gperftools.h"
#include "collapse/pprof_read.h"
#include "formats/callgrind.h"
#include "formats/massif.h"
#include "formats/trace_stacks.h"
#include "formats/cpuprofile.h"
#include "formats/thread_dumps.h"

namespace pf {

StackTree ReadProfile(InputFormat format, ByteSource& source, const ProfileOptions& options,
                      const Symbolizer::Options& symbols, ReadReport* report) {
  (void)options;
  (void)symbols;
  (void)report;
  switch (format) {
    case InputFormat::kPprof:
      return ReadPprof(source, options.tags, symbols, report,
                       !options.perf || options.perf->inline_frames,
                       options.perf && options.perf->srcline);
    case InputFormat::kMassif:
      return ReadMassif(source, options.snapshot, report);
    case InputFormat::kCallgrind:  // stacks only from --separate-callers (callgrind.h)
      return CallgrindStacks(ReadCallgrind(source, report), source.name());
    case InputFormat::kBpftrace:
    case InputFormat::kBcc:
    case InputFormat::kDtrace:
    case InputFormat::kStap:
      return ReadTraceStacks(format, source, report);
    case InputFormat::kGperftoolsCpu:
    case InputFormat::kGperftoolsHeap:
      return ReadGperftools(format, source, options, symbols, report);
    case InputFormat::kEuStack:
      return ReadThreadDumps(ThreadDumpFormat::kEuStack, source, report);
    case InputFormat::kGdb:
      return ReadThreadDumps(ThreadDumpFormat::kGdb, source, report);
    case InputFormat::kJstack:
      return ReadThreadDumps(ThreadDumpFormat::kJstack, source, report);
    case InputFormat::kCpuProfile:
      return ReadCpuProfile(source, report);
    default:
      break;
  }
  throw Error(source.name(), std::string("pf cannot read ") + FormatName(format) + " yet");
}

}  // namespace pf
