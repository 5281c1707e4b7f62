// Benchmark: unwinds per second of the compiled CFI tables against libdw (and libunwind,
// when the build found it), on the user stacks of a DWARF recording (perf record
// --call-graph dwarf, or pf-record --call-graph=dwarf --raw-stacks).
//   pf_unwind_bench RECORDING [SECONDS]
// Every sample's stack is unwound by each unwinder for about SECONDS (default 2) of CPU time
// after a first pass (which loads the tables: reported apart); the frames found are checked
// equal. Not a ctest test.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "io/input.h"
#include "pfstream/perf_data.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"

namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Result {
  double first_pass = 0;  // seconds, tables or Dwfl built
  double per_unwind = 0;  // seconds, steady state
  double per_deep_unwind = 0;  // the same for stacks of 25 frames or more
  size_t deep = 0;
  double deep_frames = 0;
  uint64_t frames = 0;    // per pass
  std::vector<std::vector<uint64_t>> chains;
};

// Replays the recording into a session (maps) and keeps every sample, then unwinds them all
// repeatedly with `method`.
Result Run(const std::string& path, pf::UnwindMethod method, double seconds) {
  std::unique_ptr<pf::ByteSource> src = pf::OpenInput(path);
  pf::PerfDataReader reader(*src);
  pf::Symbolizer symbolizer(pf::Symbolizer::Options{});
  pf::Session session(symbolizer);
  session.SetUnwindMethod(method);
  // Samples are unwound against the maps of the moment they were taken: with the records in
  // time order and maps that do not change after the start, unwinding them all at the end
  // sees the same maps.
  std::vector<std::vector<uint8_t>> bodies;
  std::vector<uint16_t> miscs;
  pf::ReplayOrdered(reader, [&](const pf::Record& r) {
    if (r.type != pf::kRecordSample) {
      session.OnRecord(reader, r);
      return;
    }
    bodies.emplace_back(r.body.begin(), r.body.end());
    miscs.push_back(r.misc);
  });
  std::vector<pf::Sample> samples;
  std::vector<std::vector<uint64_t>> aligned;
  for (size_t i = 0; i < bodies.size(); ++i) {
    aligned.emplace_back((bodies[i].size() + 7) / 8);
    std::memcpy(aligned.back().data(), bodies[i].data(), bodies[i].size());
  }
  for (size_t i = 0; i < aligned.size(); ++i) {
    pf::Record r;
    r.type = pf::kRecordSample;
    r.misc = miscs[i];
    r.body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned[i].data()),
                                      bodies[i].size());
    pf::Sample s;
    if (reader.ParseSample(r, &s) && !s.stack_user.empty()) samples.push_back(s);
  }
  Result res;
  if (samples.empty()) throw pf::Error(path, "no samples with user stack copies");
  std::vector<uint64_t> scratch;
  double t0 = CpuSeconds();
  for (const pf::Sample& s : samples) {
    std::span<const uint64_t> c = session.Callchain(s, &scratch);
    res.chains.emplace_back(c.begin(), c.end());
    res.frames += c.size();
  }
  res.first_pass = CpuSeconds() - t0;
  auto time = [&](const std::vector<pf::Sample>& set) {
    uint64_t unwinds = 0;
    double start = CpuSeconds(), now = start;
    while (now - start < seconds && !set.empty()) {
      for (const pf::Sample& s : set) session.Callchain(s, &scratch);
      unwinds += set.size();
      now = CpuSeconds();
    }
    return unwinds ? (now - start) / static_cast<double>(unwinds) : 0.0;
  };
  res.per_unwind = time(samples);
  // Deep stacks (the recursion of unwind_prog): the per-sample target is for 30 frames.
  std::vector<pf::Sample> deep;
  uint64_t deep_frames = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (res.chains[i].size() >= 25) {
      deep.push_back(samples[i]);
      deep_frames += res.chains[i].size();
    }
  }
  res.deep = deep.size();
  res.deep_frames = deep.empty() ? 0 : static_cast<double>(deep_frames) / deep.size();
  res.per_deep_unwind = time(deep);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RECORDING [SECONDS]\n", argv[0]);
    return 2;
  }
  double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  try {
    Result table = Run(argv[1], pf::UnwindMethod::kTable, seconds);
    Result libdw = Run(argv[1], pf::UnwindMethod::kLibdw, seconds);
    size_t n = table.chains.size();
    double frames = static_cast<double>(table.frames) / static_cast<double>(n);
    size_t same = 0;
    for (size_t i = 0; i < n; ++i) same += table.chains[i] == libdw.chains[i];
    std::printf("%zu samples, %.1f frames each (kernel part included); %zu of %zu chains equal\n",
                n, frames, same, n);
    std::printf("%-8s %12s %12s %14s %12s\n", "unwinder", "first pass", "per unwind",
                "unwinds/s/core", "per frame");
    for (auto [name, r] : {std::pair<const char*, const Result*>{"table", &table},
                           {"libdw", &libdw}}) {
      std::printf("%-8s %10.1f ms %9.2f us %14.0f %9.0f ns\n", name, r->first_pass * 1e3,
                  r->per_unwind * 1e6, 1.0 / r->per_unwind, r->per_unwind * 1e9 / frames);
    }
    if (table.deep > 0) {
      std::printf("%zu deep stacks (%.1f frames each):\n", table.deep, table.deep_frames);
      for (auto [name, r] : {std::pair<const char*, const Result*>{"table", &table},
                             {"libdw", &libdw}}) {
        std::printf("%-8s %25.2f us %14.0f\n", name, r->per_deep_unwind * 1e6,
                    1.0 / r->per_deep_unwind);
      }
    }
    std::printf("table is %.1fx faster than libdw (%.1fx on deep stacks)\n",
                libdw.per_unwind / table.per_unwind,
                table.deep ? libdw.per_deep_unwind / table.per_deep_unwind : 0.0);
  } catch (const pf::Error& e) {
    std::fprintf(stderr, "pf_unwind_bench: error: %s\n", e.Describe().c_str());
    return 1;
  }
  return 0;
}
