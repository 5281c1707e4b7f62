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
  // Look at the first meaningful lines: folded lines end in a count, perf script lines in
  // ':' (events) or ')' (frames).
  LineSplitter lines(head);
  std::string_view line;
  int folded = 0, other = 0, seen = 0;
  bool first_folded = false;
  FoldedLine fl;
  while (seen < 20 && lines.Next(&line)) {
    if (!lines.position() || IsFoldedIgnorable(line)) continue;
    if (lines.position() == head.data() + head.size() && head.back() != '\n' &&
        head.size() >= (1 << 20)) {
      break;  // a line cut by the end of the peeked chunk says nothing
    }
    bool is_folded = ParseFoldedLine(line, 0, &fl);
    if (seen == 0) first_folded = is_folded;
    ++seen;
    (is_folded ? folded : other)++;
  }
  if (seen == 0) return InputFormat::kPerfScript;  // only comments and blank lines
  if (first_folded && folded * 5 >= seen * 4) return InputFormat::kFolded;
  return InputFormat::kPerfScript;
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
