#pragma once
// The input formats pf reads, named once: the names -f/--input-format takes (cli), the
// formats the sniffer recognises (formats/sniff.h), and the list every "pf reads ..." error
// prints. A format is added here, recognised in SniffFormat and read in collapse/profiles.cpp
// (docs/DESIGN.md, "How to add a reader").

#include <string>
#include <string_view>

namespace pf {

struct InputFormatName {
  const char* name;     // canonical, as -f takes it and CollapseOptions::format holds it
  const char* aliases;  // other names -f takes (gprof2dot's, FlameGraph's), blank-separated
  const char* what;     // for help texts and errors
};

inline constexpr InputFormatName kInputFormatNames[] = {
    {"perf-script", "perf", "perf script text"},
    {"folded", "collapse", "folded stacks (`a;b;c COUNT`)"},
    {"perf-data", "perf.data", "perf.data files and pf-record streams"},
    {"pprof", "proto", "pprof profile.proto (gzipped or not)"},
    {"gperftools-cpu", "gperftools", "gperftools CPU profiles (CPUPROFILE)"},
    {"gperftools-heap", "", "gperftools heap profiles (HEAPPROFILE)"},
    {"massif", "", "valgrind massif output"},
    {"callgrind", "", "valgrind callgrind output"},
    {"bpftrace", "", "bpftrace stack maps"},
    {"bcc", "", "bcc profile and offcputime output"},
    {"dtrace", "", "DTrace stack aggregations"},
    {"stap", "systemtap", "SystemTap stack aggregations"},
    {"eu-stack", "elfutils", "eu-stack output"},
    {"gdb", "", "gdb backtraces"},
    {"jstack", "", "jstack thread dumps"},
    {"cpuprofile", "v8 chrome", "Chrome and V8 .cpuprofile JSON"},
};

/// The canonical name of the format `name` (a name or an alias) names; "" when none.
std::string_view CanonicalFormatName(std::string_view name);

/// What pf reads, for errors: "perf script text, folded stacks (...), ...".
std::string FormatsPfReads();

}  // namespace pf
