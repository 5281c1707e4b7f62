#include "formats/sniff.h"

#include "formats/perf_script.h"
#include "io/line_reader.h"
#include "stacks/folded.h"

namespace pf {

namespace {

// Binary: NUL bytes, or many control characters other than common whitespace.
bool LooksBinary(std::string_view head) {
  std::string_view sample = head.substr(0, 64 << 10);
  size_t control = 0;
  for (char ch : sample) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0) return true;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') ++control;
  }
  return control * 20 > sample.size();  // over 5%
}

}  // namespace

InputFormat SniffFormat(std::string_view head) {
  if (head.empty()) return InputFormat::kEmpty;
  if (head.substr(0, 8) == "PERFILE2" || head.substr(0, 8) == "2ELIFREP") {
    return InputFormat::kPerfData;
  }
  if (LooksBinary(head)) return InputFormat::kBinary;
  // The first meaningful line decides: a folded line ends in a count after a blank, which a
  // perf script event line (ending in "event:") or frame line (ending in "(dso)") never does.
  LineSplitter lines(head);
  std::string_view line;
  FoldedLine fl;
  while (lines.Next(&line)) {
    if (IsFoldedIgnorable(line)) continue;
    return ParseFoldedLine(line, 0, &fl) ? InputFormat::kFolded : InputFormat::kPerfScript;
  }
  return InputFormat::kPerfScript;  // only comments and blank lines
}

const char* FormatName(InputFormat f) {
  switch (f) {
    case InputFormat::kEmpty:
      return "empty";
    case InputFormat::kPerfScript:
      return "perf script text";
    case InputFormat::kFolded:
      return "folded stacks";
    case InputFormat::kPerfData:
      return "perf.data";
    case InputFormat::kBinary:
      return "binary data";
  }
  return "?";
}

}  // namespace pf
