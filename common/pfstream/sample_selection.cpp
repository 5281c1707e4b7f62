// perf script's sample selection (see sample_selection.h). The --time parsers follow perf
// 6.1's time-utils rules, quirks included, since users type perf's strings: a range's ends
// are inclusive and 0 leaves an end open; ranges given as seconds must be in order without
// overlap; a percentage slice ends one nanosecond before the next slice begins, except at the
// recording's last sample.
#include "pfstream/sample_selection.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/cpu_list.h"
#include "base/error.h"
#include "pfstream/sample_layout.h"

namespace pf {

namespace {


[[noreturn]] void BadTime(std::string_view text) {
  throw UsageError("--time: invalid time string '" + std::string(text) +
                   "' (perf's forms: START,END in seconds, either end may be empty, ranges "
                   "separated by spaces; or slices: 10%/2, 0%-10%,30%-40%, 25%)");
}

// "SECONDS[.FRACTION]" (up to nine decimals) in nanoseconds, as perf's parse_nsec_time reads
// it (strtoul's leniency included).
bool ParseSeconds(const std::string& s, uint64_t* ns) {
  char* end = nullptr;
  uint64_t sec = std::strtoull(s.c_str(), &end, 10);
  if (*end != '.' && *end != '\0') return false;
  uint64_t frac = 0;
  if (*end == '.') {
    std::string digits(end + 1);
    if (digits.size() > 9) return false;
    digits.resize(9, '0');
    char* fend = nullptr;
    frac = std::strtoull(digits.c_str(), &fend, 10);
    if (*fend != '\0') return false;
  }
  *ns = sec * 1000000000ull + frac;
  return true;
}

// One "START,END" (either may be empty; no comma: START alone).
bool ParseRange(std::string_view piece, TimeRange* r) {
  *r = TimeRange{};
  if (piece.empty()) return true;
  size_t comma = piece.find(',');
  std::string start(piece.substr(0, comma));
  std::string end = comma == std::string_view::npos ? "" : std::string(piece.substr(comma + 1));
  if (!start.empty() && !ParseSeconds(start, &r->start)) return false;
  if (!end.empty() && !ParseSeconds(end, &r->end)) return false;
  return !(r->end && r->end < r->start);
}

bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// "P%" as perf's parse_percent reads it: the number before the first '%', whole.
bool ParsePercent(std::string_view s, double* fraction) {
  size_t pct = s.find('%');
  if (pct == std::string_view::npos) return false;
  std::string num(s.substr(0, pct));
  char* end = nullptr;
  double d = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || std::isnan(d)) return false;
  *fraction = d / 100.0;
  return true;
}

bool SetPercent(double from, double to, uint64_t first, uint64_t last, TimeRange* r) {
  if (from < 0.0 || from > 1.0 || to < 0.0 || to > 1.0) return false;
  double total = static_cast<double>(last - first);
  r->start = first + static_cast<uint64_t>(std::round(from * total));
  r->end = first + static_cast<uint64_t>(std::round(to * total));
  if (r->end > r->start && r->end != last) r->end -= 1;
  return true;
}

// "P%/N": the Nth slice of P percent.
bool SlashSlice(std::string_view piece, uint64_t first, uint64_t last, TimeRange* r) {
  size_t slash = piece.find('/');
  double pct;
  if (slash == std::string_view::npos || !ParsePercent(piece.substr(0, slash), &pct)) {
    return false;
  }
  std::string n(piece.substr(slash + 1));
  char* end = nullptr;
  long i = std::strtol(n.c_str(), &end, 10);
  if (*end != '\0' || pct <= 0.0) return false;
  return SetPercent(pct * static_cast<double>(i - 1), pct * static_cast<double>(i), first, last,
                    r);
}

// "P%-Q%".
bool DashSlice(std::string_view piece, uint64_t first, uint64_t last, TimeRange* r) {
  *r = TimeRange{};
  if (piece.empty()) return true;  // (perf reads an empty piece as the whole recording)
  size_t dash = piece.find('-');
  double from, to;
  if (dash == std::string_view::npos || !ParsePercent(piece.substr(0, dash), &from) ||
      !ParsePercent(piece.substr(dash + 1), &to)) {
    return false;
  }
  return SetPercent(from, to, first, last, r);
}

std::vector<std::string> SplitComma(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    size_t comma = text.find(',', at);
    out.emplace_back(text.substr(at, comma == std::string_view::npos ? comma : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

std::vector<uint32_t> ParseIds(const char* option, std::string_view text) {
  std::vector<uint32_t> ids;
  for (const std::string& item : SplitComma(text)) {
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || !(item[0] >= '0' && item[0] <= '9') || *end != '\0' || errno ||
        v > 0xffffffffu) {
      throw UsageError(std::string(option) + ": '" + item + "' is not a number (give " +
                       "a list such as 1234,1240)");
    }
    ids.push_back(static_cast<uint32_t>(v));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

std::vector<TimeRange> ParseTimeRanges(std::string_view text) {
  size_t commas = static_cast<size_t>(std::count(text.begin(), text.end(), ','));
  if (commas == 0) BadTime(text);
  // Ranges are separated by white space after a range's comma and end.
  std::vector<TimeRange> ranges(commas);
  size_t p = 0;
  for (size_t i = 0; i + 1 < commas; ++i) {
    size_t arg = p;
    p = text.find(',', p) + 1;
    while (p < text.size() && IsSpace(text[p])) ++p;
    while (p < text.size() && !IsSpace(text[p])) {
      if (text[p++] == ',') BadTime(text);
    }
    size_t arg_end = p;
    if (p < text.size()) ++p;
    if (!ParseRange(text.substr(arg, arg_end - arg), &ranges[i])) BadTime(text);
  }
  if (!ParseRange(text.substr(p), &ranges[commas - 1])) BadTime(text);
  for (size_t i = 0; i + 1 < ranges.size(); ++i) {
    if (ranges[i].end >= ranges[i + 1].start) BadTime(text);
  }
  return ranges;
}

std::vector<TimeRange> ParsePercentRanges(std::string_view text, uint64_t first,
                                          uint64_t last) {
  std::vector<TimeRange> ranges;
  auto split = [&](bool (*slice)(std::string_view, uint64_t, uint64_t, TimeRange*)) {
    size_t at = 0;
    while (at < text.size()) {
      size_t comma = text.find(',', at);
      std::string_view piece =
          text.substr(at, comma == std::string_view::npos ? comma : comma - at);
      if (!slice(piece, first, last, &ranges.emplace_back())) BadTime(text);
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
  };
  if (text.find('/') != std::string_view::npos) {
    split(SlashSlice);
  } else if (text.find('-') != std::string_view::npos) {
    split(DashSlice);
  } else {
    // "P%": the first slice of P percent; the '%' must end the string.
    size_t pct = text.find('%');
    if (pct == std::string_view::npos || pct + 1 != text.size() ||
        !SlashSlice(std::string(text) + "/1", first, last, &ranges.emplace_back())) {
      BadTime(text);
    }
  }
  return ranges;
}

SampleSelection::SampleSelection(const SelectionOptions& o) : options_(o) {
  if (!o.comms.empty()) {
    comms_ = SplitComma(o.comms);
    std::sort(comms_.begin(), comms_.end());
    thread_ = true;
  }
  if (!o.pids.empty()) {
    pids_ = ParseIds(o.pid_option, o.pids);
    thread_ = true;
  }
  if (!o.tids.empty()) {
    tids_ = ParseIds(o.tid_option, o.tids);
    thread_ = true;
  }
  if (!o.cpus.empty()) {
    for (int cpu : ParseCpuList(o.cpus)) {
      if (static_cast<size_t>(cpu) >= cpus_.size()) cpus_.resize(static_cast<size_t>(cpu) + 1);
      cpus_[static_cast<size_t>(cpu)] = true;
    }
    has_cpus_ = time_cpu_ = true;
  }
  if (!o.time.empty()) {
    has_time_ = time_cpu_ = true;
    // Seconds are checked now; percentages (and --reltime) need the recording.
    if (o.time.find('%') == std::string::npos) ranges_ = ParseTimeRanges(o.time);
  }
}

void RequireSampleCpus(const PerfDataReader& reader, const std::string& option) {
  for (const EventAttr& a : reader.attrs()) {
    if (!(a.sample_type & sample_layout::kCpu)) {
      throw UsageError(option + ": the samples of '" + a.name + "' do not record their CPU " +
                       "(record with -a, or perf record --sample-cpu)");
    }
  }
}

void SampleSelection::Bind(const PerfDataReader& reader) {
  if (has_cpus_) RequireSampleCpus(reader, "--cpu");
  if (!has_time_) return;
  const bool percent = options_.time.find('%') != std::string::npos;
  if ((percent || options_.reltime) && !reader.ScanSampleTimes()) {
    throw UsageError(std::string("--time ") + (percent ? "with percentages" : "with --reltime") +
                     " needs the recording's first and last sample time, which a stream read " +
                     "from a pipe does not give before its end: give the times in seconds, or " +
                     "the recording as a file");
  }
  const uint64_t first = reader.first_sample_time(), last = reader.last_sample_time();
  if (percent) ranges_ = ParsePercentRanges(options_.time, first, last);
  if (options_.reltime) {
    for (TimeRange& r : ranges_) {
      r.start += first;
      r.end += first;
    }
  }
}

bool SampleSelection::InTime(uint64_t t) const {
  if (!has_time_ || t == 0 || ranges_.empty()) return true;  // (perf keeps untimed samples)
  if (ranges_.size() == 1) {
    const TimeRange& r = ranges_[0];
    return !((r.start && t < r.start) || (r.end && t > r.end));
  }
  for (const TimeRange& r : ranges_) {
    if (t >= r.start && (t <= r.end || !r.end)) return true;
  }
  return false;
}

std::string SelectionOptions::Names() const {
  std::string names;
  auto add = [&names](const std::string& value, const char* name) {
    if (!value.empty()) names += (names.empty() ? "" : ", ") + std::string(name);
  };
  add(comms, "--comms");
  add(pids, pid_option);
  add(tids, tid_option);
  add(cpus, "--cpu");
  add(time, "--time");
  return names;
}

bool SampleSelection::KeepsThread(const Sample& s, std::string_view comm) const {
  if (!thread_) return true;
  if (!comms_.empty() && !std::binary_search(comms_.begin(), comms_.end(), comm)) return false;
  if (!pids_.empty() && !std::binary_search(pids_.begin(), pids_.end(), s.pid)) return false;
  return tids_.empty() || std::binary_search(tids_.begin(), tids_.end(), s.tid);
}

}  // namespace pf
