#pragma once
// Recognising an input's format from its first bytes, so no reader guesses silently.
//
// pf reads perf script text, folded stacks and perf.data recordings (files and pipe streams).
// Other profilers' outputs that users feed it by mistake (a DTrace aggregation, a macOS
// `sample` report, `perf report` text, JSON or XML profiles, gprof's report)
// are recognised by their documented shape and named, so the tools refuse them with a clear
// error instead of folding their lines into a junk stack.

#include <string>
#include <string_view>

#include "base/input_formats.h"

namespace pf {

enum class InputFormat {
  kEmpty,
  kPerfScript,
  kFolded,
  kPerfData,
  kBinary,   // not a format pf reads
  kForeign,  // another profiler's format pf does not read
  // Other profilers' formats pf reads (collapse/profiles.h), in base/input_formats.h's order.
  kPprof,
  kGperftoolsCpu,
  kGperftoolsHeap,
  kMassif,
  kCallgrind,
  kBpftrace,
  kBcc,
  kDtrace,
  kStap,
  kEuStack,
  kGdb,
  kJstack,
  kCpuProfile,
};

/// The format a canonical name (base/input_formats.h) names; kEmpty for "auto" or none.
InputFormat FormatFromName(std::string_view canonical);

/// The format of an input whose first (decompressed) bytes are `head`. For kForeign,
/// `foreign` (when given) is set to what the input looks like ("callgrind output", ...).
InputFormat SniffFormat(std::string_view head, std::string* foreign = nullptr);

/// The name of another profiler's text format that `head` is in, or nullptr when it does not
/// look like one pf knows of (it may still be perf script text or folded stacks).
const char* SniffForeignFormat(std::string_view head);

/// The format's name for messages: "perf script text", "pprof profile.proto ...".
const char* FormatName(InputFormat f);

}  // namespace pf
