// Parsing gperftools' CPU and heap profiles (gperftools.h), as pprof's legacy parser reads
// them (github.com/google/pprof, profile/legacy_profile.go), so pf's values equal pprof's.
//
// CPU profile (gperftools' docs/cpuprofile-fileformat): machine words, 32 or 64 bits, in the
// writer's byte order. A header of five words 0, 3, 0, PERIOD (microseconds), 0; records
// COUNT, DEPTH, DEPTH program counters (the leaf first); a trailer 0, 1, 0; then the text of
// /proc/self/maps. The word size and byte order are the first of 32-bit little-endian,
// 32-bit big-endian, 64-bit little-endian, 64-bit big-endian whose header reads right (as
// pprof tries them). A third word of 1 is a Java profile, which pf refuses. After reading,
// pprof's two fix-ups: a second frame that nearly every record shares (all but one in 32:
// the signal handler's) is removed, up to twice; a leaf repeated as the next frame (the
// handler took it from both the signal context and the stack) is removed once. A record
// whose depth runs past the end, or a profile without a trailer, is a profile cut short:
// what came before is kept, and said.
//
// Heap profile: a header line `heap profile: N: B [ M: A] @ KIND[/RATE]`, then one line per
// stack `N: B [M: A] @ 0xPC 0xPC ...` (in use, then allocated since the start), then
// MAPPED_LIBRARIES: (or --- Memory map: ---) and the maps text. As pprof: the values are
// alloc_objects, alloc_space, inuse_objects, inuse_space when the header's allocated totals
// differ from the in-use ones (and are not 0), else the in-use pair alone; KIND heap_v2 (or
// heapz_v2) is sampled every RATE bytes, "heap" every RATE/2, and such stacks' values are
// unsampled (UnsampleHeap); heapprofile (HEAPPROFILE's own dumps) records every allocation.
//
// Every stack's callers' addresses are return addresses: each is moved back by one, onto
// its call instruction, before it is looked up (the leaf is where the program was).

#include "formats/gperftools.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "base/diagnostics.h"
#include "base/error.h"
#include "io/line_reader.h"

namespace pf {

namespace {

// A word reader of one size and byte order over the whole profile.
struct Words {
  std::string_view data;
  size_t pos = 0;
  int size = 8;  // bytes
  bool big = false;

  bool Next(uint64_t* v) {
    if (data.size() - pos < static_cast<size_t>(size)) return false;
    uint64_t x = 0;
    for (int i = 0; i < size; ++i) {
      unsigned b = static_cast<unsigned char>(data[pos + (big ? i : size - 1 - i)]);
      x = x << 8 | b;
    }
    pos += size;
    *v = x;
    return true;
  }
  size_t WordsLeft() const { return (data.size() - pos) / size; }
};

// The reader whose five header words are 0, 3, JAVA, PERIOD > 0, 0 (false when none), with
// the third word in *java and the period in *period.
bool FindHeader(std::string_view data, Words* out, uint64_t* java, uint64_t* period) {
  for (int size : {4, 8}) {
    for (bool big : {false, true}) {
      Words w{data, 0, size, big};
      uint64_t h[5];
      bool all = true;
      for (uint64_t& v : h) all = all && w.Next(&v);
      if (all && h[0] == 0 && h[1] == 3 && h[2] <= 1 && h[3] > 0 && h[4] == 0) {
        *out = w;
        *java = h[2];
        *period = h[3];
        return true;
      }
    }
  }
  return false;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (IsBlank(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

void SkipBlanks(std::string_view* s) {
  while (!s->empty() && IsBlank(s->front())) s->remove_prefix(1);
}

bool Expect(std::string_view* s, char c) {
  SkipBlanks(s);
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

// A decimal number (with a '-' when `sign`), after blanks.
bool Number(std::string_view* s, int64_t* v, bool sign) {
  SkipBlanks(s);
  if (!sign && !s->empty() && s->front() == '-') return false;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), *v);
  if (ec != std::errc() || p == s->data()) return false;
  s->remove_prefix(p - s->data());
  return true;
}

// "N: B [M: A]", the counts and sizes of a heap header or stack line.
bool Counts(std::string_view* s, int64_t v[4], bool sign) {
  return Number(s, &v[0], sign) && Expect(s, ':') && Number(s, &v[1], sign) &&
         Expect(s, '[') && Number(s, &v[2], false) && Expect(s, ':') &&
         Number(s, &v[3], false) && Expect(s, ']');
}

// One line of /proc/self/maps: "START-LIMIT PERMS OFFSET DEV INODE [PATH]"; false for any
// other line. Only executable mappings hold code (pprof skips the others).
bool ParseMapsLine(std::string_view line, GperftoolsProfile::Mapping* m, bool* exec) {
  auto hex = [](std::string_view* s, uint64_t* v) {
    SkipBlanks(s);
    auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), *v, 16);
    if (ec != std::errc() || p == s->data()) return false;
    s->remove_prefix(p - s->data());
    return true;
  };
  auto word = [](std::string_view* s) {
    SkipBlanks(s);
    size_t n = 0;
    while (n < s->size() && !IsBlank((*s)[n])) ++n;
    std::string_view w = s->substr(0, n);
    s->remove_prefix(n);
    return w;
  };
  std::string_view s = line;
  if (!hex(&s, &m->start) || s.empty() || s.front() != '-') return false;
  s.remove_prefix(1);
  if (!hex(&s, &m->limit)) return false;
  std::string_view perms = word(&s);
  if (perms.empty() || perms.find_first_not_of("-rwxps") != std::string_view::npos) return false;
  if (!hex(&s, &m->offset)) return false;
  std::string_view dev = word(&s);
  if (dev.find(':') == std::string_view::npos) return false;
  std::string_view inode = word(&s);
  if (inode.empty() || inode.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  m->path = std::string(word(&s));
  *exec = perms.find('x') != std::string_view::npos;
  return m->limit > m->start;
}

void ParseMaps(std::string_view text, GperftoolsProfile* p) {
  LineSplitter lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    GperftoolsProfile::Mapping m;
    bool exec = false;
    if (ParseMapsLine(line, &m, &exec) && exec) p->mappings.push_back(std::move(m));
  }
}

// pprof's fix-ups of a C++ CPU profile's stacks (see the file comment).
void FixCpuStacks(GperftoolsProfile* p) {
  std::vector<uint64_t>& a = p->addresses;
  const size_t n = p->stacks.size();
  const size_t margin = n / 32;
  // Removes the second frame of a stack: the leaf moves up one place.
  auto drop_second = [&](GperftoolsProfile::Stack& s) {
    a[s.first + 1] = a[s.first];
    ++s.first;
    --s.depth;
  };
  for (int iter = 0; iter < 2; ++iter) {
    // The second frame nearly every record shares: at most one can be (n - margin > n / 2).
    std::vector<uint64_t> seconds;
    for (const auto& s : p->stacks) {
      if (s.depth > 1) seconds.push_back(a[s.first + 1]);
    }
    if (seconds.empty()) break;
    std::sort(seconds.begin(), seconds.end());
    bool found = false;
    uint64_t common = 0;
    for (size_t i = 0; i < seconds.size();) {
      size_t j = i;
      while (j < seconds.size() && seconds[j] == seconds[i]) ++j;
      if (j - i >= n - margin) {
        found = true;
        common = seconds[i];
        break;
      }
      i = j;
    }
    if (!found) continue;
    for (auto& s : p->stacks) {
      if (s.depth > 1 && a[s.first + 1] == common) drop_second(s);
    }
  }
  for (auto& s : p->stacks) {
    if (s.depth > 1 && a[s.first] == a[s.first + 1] + 1) drop_second(s);
  }
}

}  // namespace

bool IsGperftoolsCpu(std::string_view head) {
  Words w;
  uint64_t java, period;
  return FindHeader(head, &w, &java, &period);
}

bool IsGperftoolsHeap(std::string_view head) {
  std::string_view line = head.substr(0, head.find('\n'));
  line = Trim(line);
  constexpr std::string_view kHeader = "heap profile:";
  if (line.substr(0, kHeader.size()) != kHeader) return false;
  line.remove_prefix(kHeader.size());
  int64_t v[4];
  return Counts(&line, v, false) && Expect(&line, '@') && Trim(line).substr(0, 4) == "heap";
}

GperftoolsProfile ParseGperftoolsCpu(std::string_view data, const std::string& name,
                                     ReadReport* report) {
  Words w;
  uint64_t java = 0, period = 0;
  if (!FindHeader(data, &w, &java, &period)) {
    throw Error(name, "not a gperftools CPU profile (its header is not 0, 3, 0, PERIOD, 0)");
  }
  if (java) throw Error(name, "a Java CPU profile (gperftools' format); pf reads C/C++ ones");
  GperftoolsProfile p;
  p.period = period;
  p.types = {{"samples", WeightUnit::kSamples}, {"cpu", WeightUnit::kNanoseconds}};
  bool trailer = false;
  uint64_t saturated = 0;  // records whose cpu time passed 2^64-1 ns
  uint64_t count, depth;
  while (w.Next(&count) && w.Next(&depth)) {
    if (depth > w.WordsLeft()) break;  // cut short, or a lying depth: nothing after is sure
    size_t first = p.addresses.size();
    for (uint64_t i = 0; i < depth; ++i) {
      uint64_t pc = 0;
      w.Next(&pc);
      p.addresses.push_back(i > 0 && pc > 0 ? pc - 1 : pc);
    }
    if (count == 0 && depth == 1 && p.addresses.back() == 0) {
      p.addresses.pop_back();
      trailer = true;
      break;
    }
    p.stacks.push_back({first, static_cast<uint32_t>(depth)});
    uint64_t ns = 0, period_ns = 0;
    if (__builtin_mul_overflow(period, uint64_t{1000}, &period_ns) ||
        __builtin_mul_overflow(count, period_ns, &ns)) {
      ns = UINT64_MAX;  // saturates
      ++saturated;
    }
    p.values.push_back(count);
    p.values.push_back(ns);
  }
  if (!trailer) {
    report->warnings.push_back(name + ": the CPU profile is cut short (no end-of-samples record at byte " +
                               std::to_string(w.pos) + "); read " +
                               Plural(p.stacks.size(), "record", "records") +
                               " before it, and no memory map: frames are unnamed");
  } else {
    ParseMaps(data.substr(w.pos), &p);
    if (p.mappings.empty() && !p.stacks.empty()) {
      report->warnings.push_back(name + ": the CPU profile has no memory map after its samples: frames are unnamed");
    }
  }
  if (saturated) {
    report->warnings.push_back(name + ": " + Plural(saturated, "record's", "records'") +
                               " cpu time (count times the period of " + std::to_string(period) +
                               " us) passed 2^64-1 ns and stopped there");
  }
  FixCpuStacks(&p);
  return p;
}

void UnsampleHeap(uint64_t* count, uint64_t* bytes, uint64_t rate) {
  if (*count == 0 || *bytes == 0) {
    *count = *bytes = 0;
    return;
  }
  if (rate <= 1) return;
  double average = static_cast<double>(*bytes) / static_cast<double>(*count);
  double scale = 1 / (1 - std::exp(-average / static_cast<double>(rate)));
  auto times = [scale](uint64_t v) {
    double x = static_cast<double>(v) * scale;
    return x >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(x);
  };
  *count = times(*count);
  *bytes = times(*bytes);
}

namespace {

// The heap header's kind and rate: the profile's period (the unsampling rate, 0 for none)
// and sample types. Throws for a kind pf does not read.
void ReadHeapHeader(std::string_view line, const std::string& name, GperftoolsProfile* p) {
  std::string_view h = Trim(line).substr(std::strlen("heap profile:"));
  int64_t totals[4];
  Counts(&h, totals, false);
  Expect(&h, '@');
  SkipBlanks(&h);
  std::string_view kind = h.substr(0, h.find_first_of("/ \t"));
  p->heap_kind = std::string(kind);
  int64_t rate = 0;
  if (kind.size() < h.size() && h[kind.size()] == '/') {
    std::string_view r = h.substr(kind.size() + 1);
    Number(&r, &rate, false);
  }
  if (kind == "heap_v2" || kind == "heapz_v2") {
    p->period = rate;
  } else if (kind == "heap") {
    p->period = rate / 2;
  } else if (kind != "heapprofile") {
    throw Error(Where(name, 1), "a heap profile of kind `" + std::string(kind) +
                                    "`, which pf does not read (it reads heapprofile, heap_v2, heap)");
  }
  if (p->period <= 1) p->period = 0;
  if ((totals[2] != totals[0] && totals[2] != 0) || (totals[3] != totals[1] && totals[3] != 0)) {
    p->types = {{"alloc_objects", WeightUnit::kObjects}, {"alloc_space", WeightUnit::kBytes}};
  }
  p->types.push_back({"inuse_objects", WeightUnit::kObjects});
  p->types.push_back({"inuse_space", WeightUnit::kBytes});
}

enum class HeapLine { kStack, kMalformed, kNegative };

// One stack line, `N: B [M: A] @ 0x... 0x...`, added to `p` (values unsampled).
HeapLine AddHeapStack(std::string_view t, GperftoolsProfile* p) {
  int64_t v[4];
  if (!Counts(&t, v, true) || !Expect(&t, '@')) return HeapLine::kMalformed;
  if (v[0] < 0 || v[1] < 0 || (v[0] == 0 && v[1] != 0) || (v[2] == 0 && v[3] != 0)) {
    return HeapLine::kNegative;
  }
  const size_t first = p->addresses.size();
  while (SkipBlanks(&t), !t.empty()) {
    uint64_t pc = 0;
    const char* end = t.data() + t.size();
    if (t.size() <= 2 || t[0] != '0' || t[1] != 'x') break;
    auto [e, ec] = std::from_chars(t.data() + 2, end, pc, 16);
    if (ec != std::errc() || e == t.data() + 2 || (e != end && !IsBlank(*e))) break;
    t.remove_prefix(e - t.data());
    p->addresses.push_back(p->addresses.size() > first && pc > 0 ? pc - 1 : pc);
  }
  if (!t.empty()) {
    p->addresses.resize(first);
    return HeapLine::kMalformed;
  }
  p->stacks.push_back({first, static_cast<uint32_t>(p->addresses.size() - first)});
  uint64_t in_n = v[0], in_b = v[1], al_n = v[2], al_b = v[3];
  if (p->period) {
    UnsampleHeap(&in_n, &in_b, p->period);
    UnsampleHeap(&al_n, &al_b, p->period);
  }
  if (p->types.size() == 4) {
    p->values.push_back(al_n);
    p->values.push_back(al_b);
  }
  p->values.push_back(in_n);
  p->values.push_back(in_b);
  return HeapLine::kStack;
}

}  // namespace

GperftoolsProfile ParseGperftoolsHeap(std::string_view data, const std::string& name,
                                      ReadReport* report) {
  LineSplitter lines(data);
  std::string_view line;
  uint64_t line_no = 1;
  if (!lines.Next(&line) || !IsGperftoolsHeap(line)) {
    throw Error(Where(name, 1), "not a gperftools heap profile (no `heap profile:` header)");
  }
  GperftoolsProfile p;
  ReadHeapHeader(line, name, &p);
  // The stacks, up to the maps section.
  SkipCount malformed, negative;
  bool maps = false;
  while (lines.Next(&line)) {
    ++line_no;
    std::string_view t = Trim(line);
    if (t.empty() || t.front() == '#') continue;
    if (t.find("MAPPED_LIBRARIES:") != std::string_view::npos ||
        t.find("--- Memory map: ---") != std::string_view::npos) {
      maps = true;
      break;
    }
    HeapLine got = AddHeapStack(t, &p);
    if (got == HeapLine::kMalformed) malformed.Add(name, line_no);
    if (got == HeapLine::kNegative) negative.Add(name, line_no);
  }
  if (malformed.count) {
    report->warnings.push_back(Plural(malformed.count, "line", "lines") +
                               " skipped that were not heap profile stacks (`N: B [M: A] @ 0x...`), first at " +
                               Where(malformed.first_file, malformed.first_line));
  }
  if (negative.count) {
    report->warnings.push_back(Plural(negative.count, "stack", "stacks") +
                               " skipped with negative or inconsistent counts, first at " +
                               Where(negative.first_file, negative.first_line));
  }
  if (maps) {
    ParseMaps(std::string_view(lines.position(), data.data() + data.size() - lines.position()), &p);
  } else {
    report->warnings.push_back(name + ": the heap profile has no MAPPED_LIBRARIES: section: frames are unnamed");
  }
  if (p.period) {
    report->notices.push_back(name + ": a sampled heap profile (" + p.heap_kind + ", every " +
                              std::to_string(p.period) +
                              " bytes on average); its values are estimates, unsampled as pprof does");
  }
  return p;
}

}  // namespace pf
