#pragma once
// Recognising an input's format from its first bytes, so no reader guesses silently.
//
// pf reads perf script text, folded stacks and perf.data recordings (files and pipe streams).
// Other profilers' outputs that users feed it by mistake (a DTrace aggregation, a macOS
// `sample` report, callgrind.out, `perf report` text, JSON or XML profiles, gprof's report)
// are recognised by their documented shape and named, so the tools refuse them with a clear
// error instead of folding their lines into a junk stack.

#include <string>
#include <string_view>

namespace pf {

enum class InputFormat { kEmpty, kPerfScript, kFolded, kPerfData, kBinary, kForeign };

/// What pf reads, for error messages: "perf script text, folded stacks, ...".
inline constexpr const char* kFormatsPfReads =
    "perf script text, folded stacks (`a;b;c COUNT`), and perf.data files or pf-record streams";

/// The format of an input whose first (decompressed) bytes are `head`. For kForeign,
/// `foreign` (when given) is set to what the input looks like ("callgrind output", ...).
InputFormat SniffFormat(std::string_view head, std::string* foreign = nullptr);

/// The name of another profiler's text format that `head` is in, or nullptr when it does not
/// look like one pf knows of (it may still be perf script text or folded stacks).
const char* SniffForeignFormat(std::string_view head);

const char* FormatName(InputFormat f);

}  // namespace pf
