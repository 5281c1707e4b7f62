// Benchmark: unwinds per second of the compiled CFI tables against libdw and, when the build
// found libunwind (Debian's libunwind-dev), against libunwind's remote unwinder set up as
// perf's libunwind backend sets it up (its own find_proc_info over .eh_frame_hdr, global
// caching); on the user stacks of a DWARF recording (perf record --call-graph dwarf, or
// pf-record --call-graph=dwarf --raw-stacks).
//   pf_unwind_bench RECORDING [SECONDS]
// Every sample's stack is unwound by each unwinder for about SECONDS (default 2) of CPU time
// after a first pass (which loads the tables: reported apart); the frames found are checked
// equal. Not a ctest test.
#include <time.h>

#include <elf.h>

#include <cstdio>
#include <map>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "io/input.h"
#include "pfstream/perf_data.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "elf/elf_image.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwinder.h"

#ifdef PF_HAVE_LIBUNWIND
#include <libunwind.h>
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t, unw_word_t, unw_dyn_info_t*,
                                                  unw_proc_info_t*, int, void*);
#endif

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

#ifdef PF_HAVE_LIBUNWIND
// libunwind's remote unwinding over a sample's copied stack and the process's files.
class Libunwind {
 public:
  struct File {
    uint64_t bias = 0;  // runtime address - ELF address
    uint64_t start = 0, end = 0;
    std::shared_ptr<const pf::elf::ElfImage> image;
    uint64_t hdr = 0, table = 0, fdes = 0;  // runtime addresses of .eh_frame_hdr, its table
  };
  Libunwind(pf::Symbolizer& symbolizer, uint32_t pid, const pf::MapTable& maps) {
    // One entry per file, its bias from its lowest mapping (as libdw gets it).
    std::map<std::string, const pf::MapEntry*> first;
    for (const auto& [start, m] : maps) {
      auto& f = first[std::string(m.path)];
      if (f == nullptr || m.pgoff < f->pgoff) f = &m;
    }
    for (auto& [path, m] : first) {
      File f;
      f.image = symbolizer.RuntimeImage(m->path, m->build_id, pid);
      if (!f.image) continue;
      uint64_t vaddr = 0;
      bool ok = false;
      for (const pf::elf::ProgramHeader& p : f.image->segments()) {
        if (p.type == PT_LOAD && m->pgoff >= p.offset && m->pgoff - p.offset < p.filesz) {
          vaddr = m->pgoff - p.offset + p.vaddr;
          ok = true;
          break;
        }
      }
      if (!ok) continue;
      f.bias = m->start - vaddr;
      for (const auto& [x_start, x] : maps) {
        if (x.path != path) continue;
        f.start = f.start ? std::min(f.start, x.start) : x.start;
        f.end = std::max(f.end, x.end);
      }
      int hdr = f.image->FindSection(".eh_frame_hdr");
      if (hdr >= 0) {
        const pf::elf::Section& sec = f.image->sections()[static_cast<size_t>(hdr)];
        std::string_view d = f.image->SectionData(sec);
        // version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4.
        if (d.size() >= 12 && d[0] == 1 && static_cast<uint8_t>(d[2]) == 0x03 &&
            static_cast<uint8_t>(d[3]) == 0x3b) {
          uint32_t n;
          std::memcpy(&n, d.data() + 8, 4);
          f.hdr = sec.addr + f.bias;
          f.table = f.hdr + 12;
          f.fdes = n;
        }
      }
      files_.push_back(f);
    }
    unw_accessors_t acc{};
    acc.find_proc_info = FindProcInfo;
    acc.put_unwind_info = [](unw_addr_space_t, unw_proc_info_t*, void*) {};
    acc.get_dyn_info_list_addr = [](unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; };
    acc.access_mem = AccessMem;
    acc.access_reg = AccessReg;
    acc.access_fpreg = [](unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) {
      return -UNW_EINVAL;
    };
    acc.resume = [](unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; };
    acc.get_proc_name = [](unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) {
      return -UNW_EINVAL;
    };
    as_ = unw_create_addr_space(&acc, 0);
    unw_set_caching_policy(as_, UNW_CACHE_GLOBAL);
  }
  ~Libunwind() { unw_destroy_addr_space(as_); }

  // perf's loop (util/unwind-libunwind-local.c, get_entries).
  void Unwind(const pf::UserStack& in, std::vector<uint64_t>* ips) {
    if (!pf::DwarfRegisters(in, regs_, &known_)) return;
    stack_ = in.stack;
    unw_cursor_t c;
    if (unw_init_remote(&c, as_, this) != 0) return;
    ips->push_back(regs_[pf::kDwRip]);
    while (unw_step(&c) > 0 && ips->size() < 127) {
      unw_word_t ip;
      unw_get_reg(&c, UNW_REG_IP, &ip);
      if (unw_is_signal_frame(&c) <= 0) --ip;
      ips->push_back(ip);
    }
  }

 private:
  const File* FileOf(uint64_t addr) const {
    for (const File& f : files_) {
      if (addr >= f.start && addr < f.end) return &f;
    }
    return nullptr;
  }
  static int FindProcInfo(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need,
                          void* arg) {
    const File* f = static_cast<Libunwind*>(arg)->FileOf(ip);
    if (f == nullptr || f->fdes == 0) return -UNW_ENOINFO;
    unw_dyn_info_t di{};
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = f->start;
    di.end_ip = f->end;
    di.u.rti.segbase = f->hdr;
    di.u.rti.table_data = f->table;
    di.u.rti.table_len = f->fdes * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
  }
  static int AccessMem(unw_addr_space_t, unw_word_t addr, unw_word_t* val, int write, void* arg) {
    auto* self = static_cast<Libunwind*>(arg);
    if (write) return -UNW_EINVAL;
    uint64_t sp = self->regs_[pf::kDwRsp];
    if (addr >= sp && addr - sp < self->stack_.size() && self->stack_.size() - (addr - sp) > 8) {
      std::memcpy(val, self->stack_.data() + (addr - sp), 8);
      return 0;
    }
    // The files' bytes (.eh_frame_hdr, .eh_frame).
    const File* f = self->FileOf(addr);
    if (f == nullptr) return -UNW_EINVAL;
    uint64_t vaddr = addr - f->bias;
    for (const pf::elf::ProgramHeader& p : f->image->segments()) {
      if (p.type != PT_LOAD || vaddr < p.vaddr || vaddr - p.vaddr + 8 > p.filesz) continue;
      uint64_t off = vaddr - p.vaddr + p.offset;
      std::string_view bytes = f->image->bytes();
      if (off + 8 > bytes.size()) return -UNW_EINVAL;
      std::memcpy(val, bytes.data() + off, 8);
      return 0;
    }
    return -UNW_EINVAL;
  }
  static int AccessReg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* val, int write, void* arg) {
    auto* self = static_cast<Libunwind*>(arg);
    if (write || reg < 0 || reg >= pf::kDwRegs || !(self->known_ & (1u << reg))) {
      return -UNW_EBADREG;
    }
    *val = self->regs_[reg];
    return 0;
  }

  std::vector<File> files_;
  unw_addr_space_t as_;
  uint64_t regs_[pf::kDwRegs] = {};
  uint32_t known_ = 0;
  std::span<const uint8_t> stack_;
};
#endif

// Replays the recording into a session (maps) and keeps every sample, then unwinds them all
// repeatedly with `method`.
Result Run(const std::string& path, pf::UnwindMethod method, double seconds,
           bool libunwind = false) {
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
#ifdef PF_HAVE_LIBUNWIND
  std::map<uint32_t, std::unique_ptr<Libunwind>> unwinders;
  auto libunwind_chain = [&](const pf::Sample& s, std::vector<uint64_t>* out) {
    auto& u = unwinders[s.pid];
    if (!u) {
      static const pf::MapTable kNone;
      const pf::MapTable* maps = session.MapsOf(s.pid);
      u = std::make_unique<Libunwind>(symbolizer, s.pid, maps ? *maps : kNone);
    }
    out->clear();
    for (uint64_t ip : s.callchain) {
      if (ip == pf::kContextUser) break;
      out->push_back(ip);
    }
    out->push_back(pf::kContextUser);
    u->Unwind({s.regs_abi, s.attr->sample_regs_user, s.regs_user, s.stack_user}, out);
  };
#else
  auto libunwind_chain = [](const pf::Sample&, std::vector<uint64_t>*) {};
#endif
  auto unwind = [&](const pf::Sample& s) -> std::span<const uint64_t> {
    if (libunwind) {
      libunwind_chain(s, &scratch);
      return scratch;
    }
    return session.Callchain(s, &scratch);
  };
  double t0 = CpuSeconds();
  for (const pf::Sample& s : samples) {
    std::span<const uint64_t> c = unwind(s);
    res.chains.emplace_back(c.begin(), c.end());
    res.frames += c.size();
  }
  res.first_pass = CpuSeconds() - t0;
  auto time = [&](const std::vector<pf::Sample>& set) {
    uint64_t unwinds = 0;
    double start = CpuSeconds(), now = start;
    while (now - start < seconds && !set.empty()) {
      for (const pf::Sample& s : set) unwind(s);
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
    std::vector<std::pair<const char*, const Result*>> all = {{"table", &table},
                                                              {"libdw", &libdw}};
#ifdef PF_HAVE_LIBUNWIND
    Result libunwind = Run(argv[1], pf::UnwindMethod::kTable, seconds, true);
    all.push_back({"libunwind", &libunwind});
#endif
    size_t n = table.chains.size();
    double frames = static_cast<double>(table.frames) / static_cast<double>(n);
    // Chains are compared without the end-of-copy mark, which perf adds and libdw does not
    // always.
    auto strip = [](std::vector<uint64_t> c) {
      if (!c.empty() && c.back() == pf::Session::kTruncatedFrame) c.pop_back();
      return c;
    };
    std::printf("%zu samples, %.1f frames each (kernel part included)\n", n, frames);
    for (size_t k = 1; k < all.size(); ++k) {
      size_t same = 0;
      for (size_t i = 0; i < n; ++i) same += strip(table.chains[i]) == strip(all[k].second->chains[i]);
      std::printf("%s: %zu of %zu chains equal to the table's\n", all[k].first, same, n);
    }
    std::printf("%-9s %12s %12s %14s %12s\n", "unwinder", "first pass", "per unwind",
                "unwinds/s/core", "per frame");
    for (auto [name, r] : all) {
      std::printf("%-9s %10.1f ms %9.2f us %14.0f %9.0f ns\n", name, r->first_pass * 1e3,
                  r->per_unwind * 1e6, 1.0 / r->per_unwind, r->per_unwind * 1e9 / frames);
    }
    if (table.deep > 0) {
      std::printf("%zu deep stacks (%.1f frames each):\n", table.deep, table.deep_frames);
      for (auto [name, r] : all) {
        std::printf("%-9s %25.2f us %14.0f\n", name, r->per_deep_unwind * 1e6,
                    1.0 / r->per_deep_unwind);
      }
    }
    for (size_t k = 1; k < all.size(); ++k) {
      const Result& r = *all[k].second;
      std::printf("table is %.1fx faster than %s (%.1fx on deep stacks)\n",
                  r.per_unwind / table.per_unwind, all[k].first,
                  table.deep ? r.per_deep_unwind / table.per_deep_unwind : 0.0);
    }
  } catch (const pf::Error& e) {
    std::fprintf(stderr, "pf_unwind_bench: error: %s\n", e.Describe().c_str());
    return 1;
  }
  return 0;
}
