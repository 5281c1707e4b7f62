// The line scanners of perf script text (perf_script.h): the Perl script's two regular
// expressions, for the event line (MatchEventHead, MatchEventTail) and the stack line
// (MatchStackLine), emulated by hand with the same leftmost-first results, linear in the line
// and allocation-free; the rare stack line whose match needs backtracking goes to re2. The
// pieces the folder also runs inline on each line are in perf_script_lines.h.

#include "formats/perf_script_lines.h"

#include <re2/re2.h>

#include <charconv>
#include <cstring>
#include <string>

#include "io/line_reader.h"

namespace pf {

namespace script_lines {

namespace {

const re2::RE2& StackLineRegex() {
  static const re2::RE2 re(
      "^[\\t\\n\\v\\f\\r ]*(\\w+)[\\t\\n\\v\\f\\r ]*(.+) \\((.*)\\)");
  return re;
}

}  // namespace

uint64_t ParsePeriod(std::string_view digits) {
  uint64_t v = 0;
  if (digits.size() < 20) {  // (no 19-digit number overflows 64 bits)
    for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
    return v;
  }
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (r.ec == std::errc::result_out_of_range) return UINT64_MAX;
  return v;
}

const re2::RE2& SingleLineRegex() {
  static const re2::RE2 re("^(?:[^:]*:)?\\s*(\\d+)?\\s+(\\S+?):\\s+(\\S.*)$");
  return re;
}

}  // namespace script_lines

using script_lines::IsDigit;
using script_lines::IsSpace;
using script_lines::LineMatch;
using script_lines::MatchStackLineFrom;
using script_lines::SkipSpaces;
using script_lines::StackLineRegex;

bool MatchEventHead(std::string_view l, EventHead* head) {
  size_t n = l.size();
  if (n < 2 || IsSpace(l[0])) return false;
  // The lazy comm (\S.+?) ends at the first whitespace run, at offset 2 or later, after which
  // digits, optional slashes and digits, and whitespace follow. Runs of whitespace give the
  // same answer from any of their positions, and a failed try can resume after its digits.
  for (size_t e = 2; e < n; ++e) {
    if (!IsSpace(l[e]) || (e > 2 && IsSpace(l[e - 1]))) continue;
    size_t w = e;
    while (w < n && IsSpace(l[w])) ++w;
    size_t d1 = w;
    while (d1 < n && IsDigit(l[d1])) ++d1;
    if (d1 == w) {
      e = w - 1;
      continue;
    }
    size_t s1 = d1;
    while (s1 < n && l[s1] == '/') ++s1;
    size_t d2 = s1;
    while (d2 < n && IsDigit(l[d2])) ++d2;
    if (d2 < n && IsSpace(l[d2])) {
      head->comm = l.substr(0, e);
      head->pid = l.substr(w, d1 - w);
      head->tid = l.substr(s1, d2 - s1);
      return true;
    }
    e = d2;
  }
  return false;
}

bool MatchEventTail(std::string_view l, std::string_view* period, std::string_view* event) {
  size_t end = l.size();
  while (end > 0 && IsSpace(l[end - 1])) --end;
  if (end < 2 || l[end - 1] != ':') return false;
  size_t tok_end = end - 1;  // the event name ends before the final ':'
  size_t x = tok_end;
  while (x > 0 && !IsSpace(l[x - 1])) --x;
  if (x == tok_end || x == 0) return false;
  size_t a = x;
  while (a > 0 && IsSpace(l[a - 1])) --a;  // \s+ (at least one: l[x-1] is space)
  size_t b = a;
  while (b > 0 && IsDigit(l[b - 1])) --b;  // (\d+)*
  size_t c = b;
  while (c > 0 && IsSpace(l[c - 1])) --c;  // \s*
  if (c == 0 || l[c - 1] != ':') return false;
  *period = l.substr(b, a - b);
  *event = l.substr(x, tok_end - x);
  return true;
}

bool MatchStackLine(std::string_view l, StackLine* out) {
  LineMatch m = MatchStackLineFrom(l, SkipSpaces(l, 0), out);
  if (m != LineMatch::kBacktrack) return m == LineMatch::kYes;
  // Only backtracking can match (e.g. "7f1e2215d058  (/lib/libc.so)"): let re2 decide.
  re2::StringPiece pc, func, dso;
  if (!re2::RE2::PartialMatch(re2::StringPiece(l.data(), l.size()), StackLineRegex(), &pc,
                              &func, &dso)) {
    return false;
  }
  out->pc = std::string_view(pc.data(), pc.size());
  out->func = std::string_view(func.data(), func.size());
  out->dso = std::string_view(dso.data(), dso.size());
  return true;
}

std::string_view EventKey(std::string_view event) {
  size_t colon = event.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == event.size()) return event;
  for (char c : event.substr(colon + 1)) {
    if (std::string_view("ukhIGHpPSDWeb").find(c) == std::string_view::npos) return event;
  }
  return event.substr(0, colon);
}

bool FindFirstEvent(std::string_view data, std::string* event) {
  LineSplitter lines(data);
  std::string_view line;
  EventHead head;
  std::string_view period, ev;
  while (lines.Next(&line)) {
    if (line.empty() || line[0] == '#' || IsSpace(line[0])) continue;
    if (MatchEventHead(line, &head) && MatchEventTail(line, &period, &ev)) {
      event->assign(ev);
      return true;
    }
  }
  return false;
}

}  // namespace pf
