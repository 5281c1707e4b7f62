#pragma once
// The names stackcollapse-perf.pl gives a sample's frames, as functions over the fields of a
// frame (perf_script.h's folder calls them for both of its readers: stack lines of perf
// script text, and the frames of a recording, named by pfstream's Session).

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

struct PerfScriptOptions;

// Perl's character classes on byte strings (\s, \d, \w), and hex digits.
namespace perl {
// \s as a table: the event line of every sample is scanned for it byte by byte, and a
// lookup is a third of the compares and branches.
inline constexpr auto kSpaceByte = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\r', '\f', '\v'}) t[c] = true;
  return t;
}();
inline bool IsSpace(char c) { return kSpaceByte[static_cast<unsigned char>(c)]; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsWord(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// [0-9a-f] as a table: every stack line's offset is scanned for it, backwards.
inline constexpr auto kLowerHexByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  return t;
}();
inline bool IsLowerHex(char c) { return kLowerHexByte[static_cast<unsigned char>(c)]; }
inline bool IsHex(char c) { return IsLowerHex(c) || (c >= 'A' && c <= 'F'); }
}  // namespace perl

/// A frame as the Perl script reads it from a stack line `PC NAME+0xOFF (DSO)` (and with
/// --srcline from the source line after it).
struct ScriptFrame {
  std::string_view pc;       // the address as printed, hex digits
  std::string_view name;     // the symbol, its offset stripped (StripOffset)
  std::string_view dso;      // "inlined" for perf's "(inlined)"
  std::string_view srcline;  // the source line, or "" (only with --srcline)
  // Only from a recording, for formats that keep addresses (pprof): where the function
  // starts in its module (a file offset; an address for the kernel and JIT code), and the
  // module's build-id (hex, or "").
  static constexpr uint64_t kNoEntry = UINT64_MAX;
  uint64_t entry = kNoEntry;
  std::string_view build_id;
};

/// The Perl script's s/\+0x[\da-f]+$//: a stack line's function without its offset.
inline std::string_view StripOffset(std::string_view f) {
  // the hex digits at the end, then "+0x" before them
  size_t i = f.size();
  while (i > 0 && perl::IsLowerHex(f[i - 1])) --i;
  if (i == f.size() || i < 3 || f[i - 3] != '+' || f[i - 2] != '0' || f[i - 1] != 'x') return f;
  return f.substr(0, i - 3);
}

/// Whether a dso is a kernel's ("[kernel.kallsyms]", a vmlinux, a .ko module) or a JIT's
/// (/tmp/perf-PID.map, jitted-PID-N.so), for --kernel and --jit.
bool IsKernelModule(std::string_view dso);
bool IsJitModule(std::string_view dso);

/// The module's file name: what follows the last '/' of the dso.
std::string_view DsoFile(std::string_view dso);

/// Scratch space for NameFrame, reused from frame to frame.
struct FrameNames {
  std::vector<std::string> names;  // the first `count` are the frame's names
  size_t count = 0;
  bool skip_after = false;  // the frame is one of --skip-after's
  std::vector<std::string_view> parts;
  std::string rust;
};

/// Names one frame as the Perl script does: none for a process-name frame "(...)", else one
/// per part of a perf inline chain "a->b" (the callers first), tidied, annotated for --kernel,
/// --jit, --inline and --addrs, with its source line for --srcline. `java`: the sample's comm
/// starts with "java" (the Perl script strips Java's 'L' prefix there).
void NameFrame(const ScriptFrame& frame, const PerfScriptOptions& options, bool java,
               FrameNames* out);

}  // namespace pf
