// The DWARF unwinder: the encodings, the CFA program interpreter, the expression evaluator,
// the walk over a copied stack, and — on stacks recorded here — agreement with libdw.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "io/input.h"
#include "io/output.h"
#include "perf/recorder.h"
#include "pfstream/online_unwind.h"
#include "pfstream/perf_data.h"
#include "test_util.h"
#include "pfstream/perf_writer.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"
#include "symbolize/symbolizer.h"
#include "unwind/cfi.h"
#include "base/dwarf_reader.h"
#include "unwind/unwinder.h"

namespace pf {

// What the tests read of a CfiTable: the FDEs indexed and compiled, and where the index came
// from (a friend of CfiTable: not in its interface).
struct CfiTableTestPeer {
  static size_t FdeCount(const CfiTable& t) { return t.fdes_.size(); }
  static size_t CompiledCount(const CfiTable& t) { return t.compiled_; }
  static const char* Source(const CfiTable& t) { return t.source_; }
};

// What a Session's Prefetch planned to load (a friend of Session: not in its interface).
struct SessionTestPeer {
  static const BinaryTables::PrefetchPlan& PrefetchPlan(const Session& s) {
    return s.tables_.prefetch_plan_;
  }
};

namespace {

// --- building .eh_frame by hand --------------------------------------------------------------

class EhFrameBuilder {
 public:
  explicit EhFrameBuilder(uint64_t vaddr) : vaddr_(vaddr) {}
  // A CIE: "zR" (pc-relative sdata4 pointers), code 1, data -8, ra 16, `initial` program;
  // with `signal`, "zRS".
  size_t Cie(std::string initial, bool signal = false) {
    size_t at = bytes_.size();
    std::string body;
    Put32(&body, 0);  // CIE id
    body += '\1';
    body += signal ? std::string("zRS", 4) : std::string("zR", 3);
    body += '\1';    // code alignment
    body += '\x78';  // data alignment -8
    body += '\x10';  // return address register 16
    body += '\1';    // augmentation length
    body += '\x1b';  // DW_EH_PE_pcrel | DW_EH_PE_sdata4
    body += initial;
    Entry(body);
    return at;
  }
  size_t Fde(size_t cie, uint64_t pc, uint32_t range, std::string program) {
    size_t at = bytes_.size();
    std::string body;
    Put32(&body, static_cast<uint32_t>(at + 4 - cie));  // back to the CIE
    uint64_t field = vaddr_ + at + 8;                    // where pc_begin sits
    Put32(&body, static_cast<uint32_t>(pc - field));
    Put32(&body, range);
    body += '\0';  // augmentation length
    body += program;
    Entry(body);
    return at;
  }
  std::string Finish() {
    std::string out = bytes_;
    Put32(&out, 0);  // terminator
    return out;
  }

 private:
  static void Put32(std::string* s, uint32_t v) { s->append(reinterpret_cast<char*>(&v), 4); }
  void Entry(std::string body) {
    while ((body.size() + 4) % 8 != 0) body += '\0';  // DW_CFA_nop padding
    Put32(&bytes_, static_cast<uint32_t>(body.size()));
    bytes_ += body;
  }
  uint64_t vaddr_;
  std::string bytes_;
};

std::string Ops(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s += static_cast<char>(b);
  return s;
}

// The usual x86-64 CIE program: CFA = rsp + 8, return address at CFA - 8.
const std::string kCieProgram = Ops({0x0c, 0x07, 0x08, 0x90, 0x01});

TEST(UnwindDwarfReader, Leb128AndPointers) {
  std::string d = Ops({0xe5, 0x8e, 0x26, 0x7f, 0x80, 0x7f, 0xff, 0xff, 0xff, 0xff});
  DwarfReader r(d, 0x1000);
  EXPECT_EQ(r.Uleb(), 624485u);
  EXPECT_EQ(r.Sleb(), -1);
  EXPECT_EQ(r.Sleb(), -128);
  EXPECT_TRUE(r.ok());
  // pc-relative sdata4 at address 0x1000 + 6: -1 + 0x1006.
  EXPECT_EQ(r.Pointer(kPePcrel | kPeSdata4), 0x1006u - 1);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.U8(), 0);  // past the end
  EXPECT_FALSE(r.ok());
  std::string endless(100, '\x80');
  DwarfReader e(endless);
  e.Uleb();
  EXPECT_FALSE(e.ok());
}

TEST(UnwindCfi, RunsThePrologueAndEpilogueRules) {
  EhFrameBuilder b(0x2000);
  size_t cie = b.Cie(kCieProgram);
  // push %rbp; mov %rsp,%rbp; ... ; leave (restore rbp); ret
  b.Fde(cie, 0x1000, 0x20,
        Ops({0x41, 0x0e, 0x10, 0x86, 0x02,  // +1: CFA = rsp+16, rbp at CFA-16
             0x43, 0x0d, 0x06,              // +3: CFA = rbp+16
             0x4a, 0x0c, 0x07, 0x08, 0xc6}));  // +10: CFA = rsp+8, rbp restored
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x2000, {}, 0, {});
  ASSERT_EQ(CfiTableTestPeer::FdeCount(*t), 1u);
  EXPECT_STREQ(CfiTableTestPeer::Source(*t), ".eh_frame");
  CfiRow row;
  ASSERT_TRUE(t->Find(0x1000, &row));
  EXPECT_EQ(row.cfa, CfiRow::kCfaReg);
  EXPECT_EQ(row.cfa_reg, kDwRsp);
  EXPECT_EQ(row.cfa_offset, 8);
  EXPECT_EQ(row.ra, CfiRow::kAtCfa);
  EXPECT_EQ(row.ra_offset, -8);
  EXPECT_EQ(row.rbp, CfiRow::kSame);
  ASSERT_TRUE(t->Find(0x1003, &row));
  EXPECT_EQ(row.cfa_offset, 16);
  EXPECT_EQ(row.rbp, CfiRow::kAtCfa);
  EXPECT_EQ(row.rbp_offset, -16);
  ASSERT_TRUE(t->Find(0x100d, &row));
  EXPECT_EQ(row.cfa_reg, kDwRbp);
  EXPECT_EQ(row.cfa_offset, 16);
  ASSERT_TRUE(t->Find(0x101f, &row));
  EXPECT_EQ(row.cfa_reg, kDwRsp);
  EXPECT_EQ(row.cfa_offset, 8);
  EXPECT_EQ(row.rbp, CfiRow::kSame);
  EXPECT_FALSE(t->Find(0x1020, &row));  // past the FDE
  EXPECT_FALSE(t->Find(0xfff, &row));
  EXPECT_EQ(CfiTableTestPeer::CompiledCount(*t), 1u);
}

TEST(UnwindCfi, RememberAndRestoreState) {
  EhFrameBuilder b(0x2000);
  size_t cie = b.Cie(kCieProgram);
  b.Fde(cie, 0x1000, 0x40,
        Ops({0x41, 0x0e, 0x10, 0x86, 0x02,  // push rbp
             0x41, 0x0a,                    // remember
             0x0e, 0x08, 0xc6,              // an early return: CFA = rsp+8
             0x41, 0x0b}));                 // restore: CFA = rsp+16, rbp at CFA-16 again
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x2000, {}, 0, {});
  CfiRow row;
  ASSERT_TRUE(t->Find(0x1001, &row));
  EXPECT_EQ(row.cfa_offset, 16);
  ASSERT_TRUE(t->Find(0x1002, &row));
  EXPECT_EQ(row.cfa_offset, 8);
  EXPECT_EQ(row.rbp, CfiRow::kSame);
  ASSERT_TRUE(t->Find(0x1003, &row));
  EXPECT_EQ(row.cfa_offset, 16);
  EXPECT_EQ(row.rbp, CfiRow::kAtCfa);
}

TEST(UnwindCfi, PltExpressionAndSignalFrames) {
  EhFrameBuilder b(0x2000);
  size_t cie = b.Cie(kCieProgram);
  // .plt: CFA = rsp + 8 + ((rip & 15) >= 11) << 3, as GNU ld writes it.
  b.Fde(cie, 0x1100, 0x30,
        Ops({0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}));
  // __restore_rt: everything from the ucontext at rsp (glibc's rules).
  size_t sig = b.Cie("", true);
  b.Fde(sig, 0x1200, 0x10,
        Ops({0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06,  // CFA = *(rsp + 160)
             0x10, 0x06, 0x03, 0x77, 0xf8, 0x00,  // rbp at rsp + 120
             0x10, 0x07, 0x03, 0x77, 0xa0, 0x01,  // rsp at rsp + 160
             0x10, 0x10, 0x03, 0x77, 0xa8, 0x01}));  // rip at rsp + 168
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x2000, {}, 0, {});
  ASSERT_EQ(CfiTableTestPeer::FdeCount(*t), 2u);
  CfiRow row;
  ASSERT_TRUE(t->Find(0x1105, &row));
  ASSERT_EQ(row.cfa, CfiRow::kCfaExpr);
  uint64_t regs[kDwRegs] = {};
  regs[kDwRsp] = 0x7000;
  uint32_t known = (1u << kDwRsp) | (1u << kDwRip);
  auto no_memory = [](uint64_t, uint64_t*) { return false; };
  uint64_t cfa = 0;
  regs[kDwRip] = 0x1105;
  ASSERT_TRUE(EvalCfiExpression(t->Expression(row.cfa_expr), regs, known, no_memory, false, 0, &cfa));
  EXPECT_EQ(cfa, 0x7008u);
  regs[kDwRip] = 0x110b;  // after the push of the lazy-binding path
  ASSERT_TRUE(EvalCfiExpression(t->Expression(row.cfa_expr), regs, known, no_memory, false, 0, &cfa));
  EXPECT_EQ(cfa, 0x7010u);

  ASSERT_TRUE(t->Find(0x1205, &row));
  EXPECT_TRUE(row.signal_frame);
  EXPECT_EQ(row.cfa, CfiRow::kCfaExpr);
  EXPECT_EQ(row.rbp, CfiRow::kAtExpr);
  EXPECT_EQ(row.ra, CfiRow::kAtExpr);
}

// .debug_frame: CIE id 0xffffffff, FDEs point at their CIE by section offset, addresses are
// absolute. One CIE (kCieProgram) of `version`, then an FDE per (pc, range, program).
struct DebugFde {
  uint64_t pc, range;
  std::string program;
};
std::string DebugFrame(int version, const std::vector<DebugFde>& fdes) {
  auto put32 = [](std::string* s, uint32_t v) { s->append(reinterpret_cast<char*>(&v), 4); };
  auto put64 = [](std::string* s, uint64_t v) { s->append(reinterpret_cast<char*>(&v), 8); };
  std::string d, cie;
  put32(&cie, 0xffffffff);
  cie += static_cast<char>(version);
  cie += '\0';  // no augmentation
  if (version == 4) cie += std::string("\x08\x00", 2);  // address size, segment size
  cie += Ops({0x01, 0x78, 0x10});                       // code 1, data -8, ra 16
  cie += kCieProgram;
  while ((cie.size() + 4) % 8) cie += '\0';
  put32(&d, static_cast<uint32_t>(cie.size()));
  d += cie;
  for (const DebugFde& f : fdes) {
    std::string fde;
    put32(&fde, 0);  // the CIE at offset 0
    put64(&fde, f.pc);
    put64(&fde, f.range);
    fde += f.program;
    while ((fde.size() + 4) % 8) fde += '\0';
    put32(&d, static_cast<uint32_t>(fde.size()));
    d += fde;
  }
  return d;
}

// Binaries built with -fno-asynchronous-unwind-tables (and Go's) have no .eh_frame.
TEST(UnwindCfi, ReadsDebugFrameWhenThereIsNoEhFrame) {
  for (int version : {1, 4}) {
    std::string d = DebugFrame(version, {{0x401000, 0x20, Ops({0x41, 0x0e, 0x10})}});
    auto t = CfiTable::FromSections({}, 0, {}, 0, d);
    EXPECT_STREQ(CfiTableTestPeer::Source(*t), ".debug_frame") << "version " << version;
    CfiRow row;
    ASSERT_TRUE(t->Find(0x401000, &row)) << "version " << version;
    EXPECT_EQ(row.cfa_offset, 8);
    EXPECT_TRUE(row.debug_frame);
    ASSERT_TRUE(t->Find(0x401005, &row));
    EXPECT_EQ(row.cfa_offset, 16);
    EXPECT_EQ(row.ra, CfiRow::kAtCfa);
    EXPECT_FALSE(t->Find(0x401020, &row));
  }
}

// An .eh_frame that covers part of the code (the C runtime's, or none but a CIE) leaves the
// rest to .debug_frame, as libdw does.
TEST(UnwindCfi, DebugFrameCoversWhatEhFrameDoesNot) {
  EhFrameBuilder b(0x9000);
  size_t cie = b.Cie(kCieProgram);
  b.Fde(cie, 0x1000, 0x40, Ops({0x41, 0x0e, 0x10}));
  std::string eh = b.Finish();
  std::string d = DebugFrame(4, {{0x1000, 0x40, ""}, {0x3000, 0x40, Ops({0x42, 0x0e, 0x18})}});
  auto t = CfiTable::FromSections(eh, 0x9000, {}, 0, d);
  EXPECT_STREQ(CfiTableTestPeer::Source(*t), ".eh_frame");
  CfiRow row;
  ASSERT_TRUE(t->Find(0x1005, &row));  // .eh_frame's rules win where both cover a pc
  EXPECT_EQ(row.cfa_offset, 16);
  EXPECT_FALSE(row.debug_frame);
  ASSERT_TRUE(t->Find(0x3005, &row));
  EXPECT_EQ(row.cfa_offset, 24);
  EXPECT_TRUE(row.debug_frame);
  EXPECT_FALSE(t->Find(0x2000, &row));
  // An .eh_frame with a CIE alone indexes .debug_frame up front.
  EhFrameBuilder bare(0x9000);
  bare.Cie(kCieProgram);
  std::string only_cie = bare.Finish();
  auto u = CfiTable::FromSections(only_cie, 0x9000, {}, 0, d);
  EXPECT_STREQ(CfiTableTestPeer::Source(*u), ".debug_frame");
  EXPECT_EQ(CfiTableTestPeer::FdeCount(*u), 2u);
}

TEST(UnwindCfi, CorruptInputGivesNoRowsNotACrash) {
  EhFrameBuilder b(0x2000);
  size_t cie = b.Cie(kCieProgram);
  b.Fde(cie, 0x1000, 0x20, Ops({0x0b}));        // restore_state without remember
  b.Fde(cie, 0x2000, 0x20, Ops({0x3f, 0xff}));  // an unknown opcode
  b.Fde(cie, 0x3000, 0x20, Ops({0x0f, 0x40}));  // an expression longer than the FDE
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x2000, {}, 0, {});
  CfiRow row;
  EXPECT_FALSE(t->Find(0x1004, &row));
  EXPECT_FALSE(t->Find(0x2004, &row));
  EXPECT_FALSE(t->Find(0x3004, &row));
  // Every prefix of a valid section indexes without reading past its end.
  for (size_t n = 0; n < eh.size(); ++n) {
    std::string cut = eh.substr(0, n);
    auto c = CfiTable::FromSections(cut, 0x2000, cut, 0x2000, cut);
    c->Find(0x1004, &row);
  }
}

// --- the walk ---------------------------------------------------------------------------------

class OneModule : public ModuleLookup {
 public:
  explicit OneModule(CfiTable* t) : t_(t) {}
  bool Find(uint64_t, UnwindModule* m) override {
    m->cfi = t_;
    m->bias = 0;
    return true;
  }

 private:
  CfiTable* t_;
};

// Two frames: f (rbp-based CFA) called from g, the outermost (return address undefined).
struct TwoFrames {
  std::string eh;
  std::unique_ptr<CfiTable> table;
  std::vector<uint64_t> stack;  // from sp up
  uint64_t regs[20] = {};       // perf's order for mask 0xff0fff
  TwoFrames() {
    EhFrameBuilder b(0x9000);
    size_t cie = b.Cie(kCieProgram);
    b.Fde(cie, 0x1000, 0x40, Ops({0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06}));
    b.Fde(cie, 0x3000, 0x40, "");  // g: the CIE's rules
    eh = b.Finish();
    table = CfiTable::FromSections(eh, 0x9000, {}, 0, {});
    // sp = 0x7000; f's frame: [sp] local, [sp+8] saved rbp, [sp+16] return address.
    stack = {0x1111, 0xabcd, 0x3010, 0, 0, 0};
    regs[6] = 0x7008;  // rbp = sp + 8
    regs[7] = 0x7000;  // sp
    regs[8] = 0x1010;  // ip inside f, after its prologue
  }
  UserStack User(size_t bytes) const {
    UserStack u;
    u.abi = 2;
    u.regs_mask = 0xff0fff;
    u.regs = std::span<const uint64_t>(regs, 20);
    u.stack = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stack.data()),
                                       std::min(bytes, stack.size() * 8));
    return u;
  }
};

TEST(UnwindWalk, ReportsReturnAddressesMinusOne) {
  TwoFrames f;
  OneModule modules(f.table.get());
  std::vector<uint64_t> ips;
  // g's return address (the CIE's rule: at CFA - 8) reads 0: libunwind takes 0 for g's
  // caller, which perf prints as a cut chain's mark (Session adds it for kZeroReturn).
  EXPECT_EQ(UnwindUserStack(f.User(48), modules, 127, &ips), UnwindEnd::kZeroReturn);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1010, 0x300f}));  // exact pc, then ra - 1
}

// The same two frames described by .debug_frame (as in Go's binaries, whose goroutines
// start at runtime.goexit with a return address of 0): the chain ends cleanly, as libdw ends
// it; libunwind, whose answer perf marks, does not read .debug_frame.
TEST(UnwindWalk, AZeroReturnAddressFromDebugFrameEndsCleanly) {
  TwoFrames f;
  std::string d = DebugFrame(
      4, {{0x1000, 0x40, Ops({0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06})},
          {0x3000, 0x40, ""}});
  auto t = CfiTable::FromSections({}, 0, {}, 0, d);
  OneModule modules(t.get());
  std::vector<uint64_t> ips;
  EXPECT_EQ(UnwindUserStack(f.User(48), modules, 127, &ips), UnwindEnd::kComplete);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1010, 0x300f}));
}

TEST(UnwindWalk, StopsAtTheEndOfTheCopy) {
  TwoFrames f;
  OneModule modules(f.table.get());
  std::vector<uint64_t> ips;
  // 32 bytes: g's return address is the copy's last word, which perf's unwinders refuse.
  EXPECT_EQ(UnwindUserStack(f.User(32), modules, 127, &ips), UnwindEnd::kTruncated);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1010, 0x300f}));
  ips.clear();
  EXPECT_EQ(UnwindUserStack(f.User(24), modules, 127, &ips), UnwindEnd::kTruncated);
  EXPECT_EQ(ips, std::vector<uint64_t>{0x1010});
  ips.clear();
  EXPECT_EQ(UnwindUserStack(f.User(48), modules, 1, &ips), UnwindEnd::kMaxDepth);
  EXPECT_EQ(ips.size(), 1u);
}

TEST(UnwindWalk, EndsCleanlyWhereTheReturnAddressIsUndefined) {
  EhFrameBuilder b(0x9000);
  size_t cie = b.Cie(kCieProgram);
  b.Fde(cie, 0x1000, 0x40, Ops({0x41, 0x0e, 0x10}));  // f: CFA = rsp + 16 after +1
  b.Fde(cie, 0x3000, 0x40, Ops({0x07, 0x10}));        // _start: DW_CFA_undefined rip
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x9000, {}, 0, {});
  OneModule modules(t.get());
  std::vector<uint64_t> stack = {0x5555, 0x3010, 0, 0, 0};
  uint64_t regs[20] = {};
  regs[7] = 0x7000;
  regs[8] = 0x1008;
  UserStack u{2, 0xff0fff, std::span<const uint64_t>(regs, 20),
              std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stack.data()), 40)};
  std::vector<uint64_t> ips;
  EXPECT_EQ(UnwindUserStack(u, modules, 127, &ips), UnwindEnd::kComplete);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1008, 0x300f}));
  // No registers (a kernel thread's sample): nothing to unwind.
  u.abi = 0;
  ips.clear();
  EXPECT_EQ(UnwindUserStack(u, modules, 127, &ips), UnwindEnd::kNoRegisters);
  EXPECT_TRUE(ips.empty());
}

// f at 0x1000 has an FDE; 0x2000 (assembly) has none but keeps a frame pointer; _start at
// 0x3000 ends the stack.
struct FramePointerFrames {
  std::string eh;
  std::unique_ptr<CfiTable> table;
  // sp 0x7000: f's frame [0x7000] local, [0x7008] return into 0x2000's code; that code's
  // frame: rbp = 0x7010, [0x7010] saved rbp (0x7100), [0x7018] return into _start.
  std::vector<uint64_t> stack = {0x5555, 0x2010, 0x7100, 0x3010, 0, 0, 0, 0};
  uint64_t regs[20] = {};
  FramePointerFrames() {
    EhFrameBuilder b(0x9000);
    size_t cie = b.Cie(kCieProgram);
    b.Fde(cie, 0x1000, 0x40, Ops({0x41, 0x0e, 0x10}));  // f: CFA = rsp + 16 after +1
    b.Fde(cie, 0x3000, 0x40, Ops({0x07, 0x10}));        // _start: return address undefined
    eh = b.Finish();
    table = CfiTable::FromSections(eh, 0x9000, {}, 0, {});
    regs[6] = 0x7010;
    regs[7] = 0x7000;
    regs[8] = 0x1008;
  }
  UserStack User() const {
    return UserStack{2, 0xff0fff, std::span<const uint64_t>(regs, 20),
                     std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stack.data()),
                                              stack.size() * 8)};
  }
};

TEST(UnwindWalk, FollowsTheFramePointerThroughCodeWithoutAnFde) {
  FramePointerFrames f;
  OneModule modules(f.table.get());
  std::vector<uint64_t> ips;
  EXPECT_EQ(UnwindUserStack(f.User(), modules, 127, &ips), UnwindEnd::kComplete);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1008, 0x200f, 0x300f}));
  // A frame pointer that does not point into the stack above sp is not followed.
  f.regs[6] = 0x9999999;
  ips.clear();
  EXPECT_EQ(UnwindUserStack(f.User(), modules, 127, &ips), UnwindEnd::kNoInfo);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1008, 0x200f}));
}

TEST(UnwindWalk, AnRbpSavedBeyondTheCopyEndsTheChainUnmarked) {
  // f saved the caller's rbp above its return address (at CFA + 8); its caller g computes
  // its CFA from rbp.
  EhFrameBuilder b(0x9000);
  size_t cie = b.Cie(kCieProgram);
  b.Fde(cie, 0x1000, 0x40, Ops({0x41, 0x0e, 0x10, 0x11, 0x06, 0x7f}));  // CFA = rsp + 16
  b.Fde(cie, 0x3000, 0x40, Ops({0x0c, 0x06, 0x10}));                    // g: CFA = rbp + 16
  std::string eh = b.Finish();
  auto t = CfiTable::FromSections(eh, 0x9000, {}, 0, {});
  OneModule modules(t.get());
  // sp 0x7000: [0x7008] the return address into g, [0x7018] the saved rbp.
  std::vector<uint64_t> stack = {0, 0x3010, 0, 0x7100, 0, 0};
  uint64_t regs[20] = {};
  regs[7] = 0x7000;
  regs[8] = 0x1008;
  UserStack u{2, 0xff0fff, std::span<const uint64_t>(regs, 20),
              std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stack.data()), 48)};
  std::vector<uint64_t> ips;
  // All there: g's CFA is 0x7110, beyond the copy: its return address is cut (marked).
  EXPECT_EQ(UnwindUserStack(u, modules, 127, &ips), UnwindEnd::kTruncated);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1008, 0x300f}));
  // The copy ends before the saved rbp: g's CFA cannot be had (perf ends without a mark).
  u.stack = u.stack.subspan(0, 24);
  ips.clear();
  EXPECT_EQ(UnwindUserStack(u, modules, 127, &ips), UnwindEnd::kLostRegister);
  EXPECT_EQ(ips, (std::vector<uint64_t>{0x1008, 0x300f}));
}

// Stacks unwound together end as each does alone, with the same frames, whatever their
// ends and however many there are (more than one group of UnwindUserStacks).
TEST(UnwindWalk, StacksUnwoundTogetherEndAsEachDoesAlone) {
  TwoFrames f;
  OneModule two(f.table.get());
  FramePointerFrames frames;  // through a frame pointer to _start
  OneModule fp(frames.table.get());
  const UserStack via_fp = frames.User();
  UserStack no_regs = via_fp;
  no_regs.abi = 0;
  struct Case {
    UserStack in;
    ModuleLookup* modules;
    size_t max;
  };
  const std::vector<Case> cases = {
      {f.User(48), &two, 127},  // kZeroReturn
      {f.User(32), &two, 127},  // kTruncated after a frame
      {f.User(24), &two, 127},  // kTruncated at once
      {f.User(48), &two, 1},    // kMaxDepth
      {f.User(48), &two, 0},    // kMaxDepth before the first frame
      {via_fp, &fp, 127},       // kComplete through the frame pointer
      {via_fp, &fp, 2},         // kMaxDepth on the way
      {no_regs, &fp, 127},      // kNoRegisters
  };
  for (size_t count : {size_t{1}, size_t{3}, size_t{8}, size_t{37}}) {
    SCOPED_TRACE(count);
    std::vector<std::vector<uint64_t>> alone(count), together(count);
    std::vector<UnwindEnd> ends(count);
    std::vector<UnwindJob> jobs(count);
    for (size_t i = 0; i < count; ++i) {
      const Case& c = cases[(i * 5) % cases.size()];
      ends[i] = UnwindUserStack(c.in, *c.modules, c.max, &alone[i]);
      jobs[i] = {c.in, c.modules, c.max, &together[i]};
    }
    UnwindUserStacks(jobs);
    std::set<UnwindEnd> seen;
    for (size_t i = 0; i < count; ++i) {
      EXPECT_EQ(jobs[i].end, ends[i]) << "stack " << i;
      EXPECT_EQ(together[i], alone[i]) << "stack " << i;
      seen.insert(ends[i]);
    }
    if (count == 37) {
      EXPECT_EQ(seen.size(), 5u);  // every end above
    }
  }
}

// --- pf-record's rewriting of DWARF samples ---------------------------------------------------

perf_event_attr DwarfAttr() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  a.sample_regs_user = 0xff0fff;
  a.sample_stack_user = 64;
  a.exclude_callchain_user = 1;
  a.sample_id_all = 1;
  return a;
}

// A sample as the kernel writes it: a kernel chain, 20 registers, a 64-byte reservation of
// which 24 bytes were filled.
std::vector<uint64_t> DwarfSample() {
  std::vector<uint64_t> w;
  w.push_back(0);                    // header, set below
  w.push_back(0x401000);             // ip
  w.push_back(7 | uint64_t{7} << 32);  // pid, tid
  w.push_back(123456);               // time
  w.push_back(1000);                 // period
  w.push_back(2);                    // callchain nr
  w.push_back(kContextKernel);
  w.push_back(0xffffffff81000100);
  w.push_back(2);                    // regs abi
  for (int i = 0; i < 20; ++i) w.push_back(i == 8 ? 0x401000 : i == 7 ? 0x7000 : 100 + i);
  w.push_back(64);                   // stack size
  for (int i = 0; i < 8; ++i) w.push_back(0x1111 * (i + 1));
  w.push_back(24);                   // dyn_size
  perf_event_header h{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL,
                      static_cast<uint16_t>(w.size() * 8)};
  std::memcpy(w.data(), &h, sizeof h);
  return w;
}

// One record read back with the attribute a stream would declare (the sample's spans point
// into `bytes`, which this keeps).
struct ReadBack {
  std::string bytes;
  std::unique_ptr<ByteSource> src;
  std::unique_ptr<PerfDataReader> reader;
  Sample s;
  ReadBack(const perf_event_attr& attr, std::span<const uint8_t> rec) {
    StringSink sink;
    BufferedWriter out(sink);
    PerfStreamWriter writer(out);
    writer.WriteHeader();
    uint64_t id = 1;
    writer.WriteAttr(attr, std::span<const uint64_t>(&id, 1));
    writer.WriteRaw(rec);
    out.Flush();
    bytes = sink.data();
    src = MemoryInput(bytes, "rewritten");
    reader = std::make_unique<PerfDataReader>(*src);
    Record r;
    EXPECT_TRUE(reader->Next(&r));
    EXPECT_EQ(r.type, kRecordSample);
    EXPECT_TRUE(reader->ParseSample(r, &s));
  }
};

TEST(UnwindRewrite, RawStacksAreCutToTheBytesTheKernelFilled) {
  perf_event_attr attr = DwarfAttr();
  SampleRewriter rw(SampleRewriter::Mode::kTrim);
  uint64_t id = 1;
  rw.AddAttr(attr, std::span<const uint64_t>(&id, 1));
  std::vector<uint64_t> in = DwarfSample();
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), in.size() * 8);
  std::span<const uint8_t> out = rw.Rewrite(bytes);
  EXPECT_EQ(out.size(), bytes.size() - 40);  // 64 reserved, 24 kept
  ReadBack back(SampleRewriter::StreamAttr(attr, SampleRewriter::Mode::kTrim), out);
  const Sample& s = back.s;
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.callchain.size(), 2u);
  ASSERT_EQ(s.regs_user.size(), 20u);
  EXPECT_EQ(s.regs_user[7], 0x7000u);
  ASSERT_EQ(s.stack_user.size(), 24u);
  uint64_t third;
  std::memcpy(&third, s.stack_user.data() + 16, 8);
  EXPECT_EQ(third, 0x3333u);
}

TEST(UnwindRewrite, UnwoundSamplesCarryAPlainChain) {
  perf_event_attr attr = DwarfAttr();
  SampleRewriter rw(SampleRewriter::Mode::kUnwind);
  uint64_t id = 1;
  rw.AddAttr(attr, std::span<const uint64_t>(&id, 1));
  std::vector<uint64_t> in = DwarfSample();
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), in.size() * 8);
  std::span<const uint8_t> out = rw.Rewrite(bytes);
  perf_event_attr stream = SampleRewriter::StreamAttr(attr, SampleRewriter::Mode::kUnwind);
  EXPECT_FALSE(stream.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_FALSE(stream.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_EQ(stream.sample_stack_user, 64u);  // tells pf's readers the chain was unwound
  ReadBack back(stream, out);
  const Sample& s = back.s;
  // No maps are known: the user part is the sampled pc alone.
  EXPECT_EQ(std::vector<uint64_t>(s.callchain.begin(), s.callchain.end()),
            (std::vector<uint64_t>{kContextKernel, 0xffffffff81000100, kContextUser, 0x401000}));
  EXPECT_TRUE(s.regs_user.empty());
  EXPECT_TRUE(s.stack_user.empty());
  EXPECT_EQ(s.period, 1000u);
  EXPECT_EQ(rw.samples(), 1u);
  EXPECT_LT(rw.bytes_out(), rw.bytes_in());
}

// perf unwinds nothing when the kernel copied no stack (dyn_size 0: a fault in execve, the
// registers the old image's): the chain is the kernel's part alone.
TEST(UnwindRewrite, NoStackCopiedMeansNoUserFrames) {
  perf_event_attr attr = DwarfAttr();
  SampleRewriter rw(SampleRewriter::Mode::kUnwind);
  uint64_t id = 1;
  rw.AddAttr(attr, std::span<const uint64_t>(&id, 1));
  std::vector<uint64_t> in = DwarfSample();
  in.back() = 0;  // dyn_size
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), in.size() * 8);
  std::span<const uint8_t> out = rw.Rewrite(bytes);
  ReadBack back(SampleRewriter::StreamAttr(attr, SampleRewriter::Mode::kUnwind), out);
  EXPECT_EQ(std::vector<uint64_t>(back.s.callchain.begin(), back.s.callchain.end()),
            (std::vector<uint64_t>{kContextKernel, 0xffffffff81000100}));
}

// --- the test program's own CFI -----------------------------------------------------------

// tests/programs/unwind_prog.c, built beside callpath (PF_CALLPATH, set by ctest).
std::string UnwindProg() {
  if (const char* p = std::getenv("PF_UNWIND_PROG")) return p;
  const char* callpath = std::getenv("PF_CALLPATH");
  if (callpath == nullptr) return "";
  std::string dir = callpath;
  size_t slash = dir.rfind('/');
  return slash == std::string::npos ? "" : dir.substr(0, slash) + "/unwind_prog";
}

TEST(UnwindCfi, HdrIndexAgreesWithAScanOnARealBinary) {
  if (UnwindProg().empty()) GTEST_SKIP() << "PF_CALLPATH (or PF_UNWIND_PROG) is not set";
  std::shared_ptr<const elf::ElfImage> image = elf::ElfImage::Open(UnwindProg());
  auto with_hdr = CfiTable::FromElf(image);
  EXPECT_STREQ(CfiTableTestPeer::Source(*with_hdr), ".eh_frame_hdr");
  int eh = image->FindSection(".eh_frame");
  ASSERT_GE(eh, 0);
  const elf::Section& s = image->sections()[static_cast<size_t>(eh)];
  auto scanned = CfiTable::FromSections(image->SectionData(s), s.addr, {}, 0, {});
  EXPECT_STREQ(CfiTableTestPeer::Source(*scanned), ".eh_frame");
  ASSERT_EQ(CfiTableTestPeer::FdeCount(*with_hdr), CfiTableTestPeer::FdeCount(*scanned));
  ASSERT_GT(CfiTableTestPeer::FdeCount(*with_hdr), 10u);
  // Every pc of .text: the same rows either way, and every pc covered.
  int text = image->FindSection(".text");
  ASSERT_GE(text, 0);
  const elf::Section& t = image->sections()[static_cast<size_t>(text)];
  size_t covered = 0;
  for (uint64_t pc = t.addr; pc < t.addr + t.size; ++pc) {
    CfiRow a, b;
    bool fa = with_hdr->Find(pc, &a), fb = scanned->Find(pc, &b);
    ASSERT_EQ(fa, fb) << std::hex << pc;
    if (!fa) continue;
    ++covered;
    EXPECT_EQ(a.cfa, b.cfa);
    EXPECT_EQ(a.cfa_reg, b.cfa_reg);
    EXPECT_EQ(a.cfa_offset, b.cfa_offset);
    EXPECT_EQ(a.ra, b.ra);
    EXPECT_EQ(a.rbp, b.rbp);
    EXPECT_NE(a.cfa, CfiRow::kCfaUnsupported) << std::hex << pc;
  }
  EXPECT_GT(covered, t.size * 2 / 3);  // not all of .text has FDEs (crt code, padding)
}

// --- recorded stacks: the tables against libdw ------------------------------------------------

// The chains of every sample, unwound by `method`: one sample at a time, or (`together`)
// the samples between two other records in runs of up to 37 (Session::Callchains).
std::vector<std::vector<uint64_t>> Chains(const std::string& stream, UnwindMethod method,
                                          uint64_t* fallbacks, bool together = false) {
  std::unique_ptr<ByteSource> src = MemoryInput(stream, "stream");
  PerfDataReader reader(*src);
  Symbolizer symbolizer(Symbolizer::Options{});
  Session session(symbolizer);
  session.SetUnwindMethod(method);
  std::vector<std::vector<uint64_t>> out;
  std::vector<uint64_t> scratch;
  std::vector<Sample> run;
  auto unwind_run = [&] {
    std::vector<const Sample*> samples;
    for (const Sample& s : run) samples.push_back(&s);
    std::vector<std::vector<uint64_t>> scratches(run.size());
    std::vector<std::span<const uint64_t>> chains(run.size());
    session.Callchains(samples, scratches.data(), chains.data());
    for (std::span<const uint64_t> chain : chains) out.emplace_back(chain.begin(), chain.end());
    run.clear();
  };
  ReplayOrdered(reader, [&](const Record& r) {
    if (r.type != kRecordSample) {
      unwind_run();
      session.OnRecord(reader, r);
      return;
    }
    Sample s;
    if (!reader.ParseSample(r, &s)) return;
    if (together) {
      run.push_back(s);
      if (run.size() == 37) unwind_run();
      return;
    }
    std::span<const uint64_t> chain = session.Callchain(s, &scratch);
    out.emplace_back(chain.begin(), chain.end());
  });
  unwind_run();
  if (fallbacks) *fallbacks = session.libdw_fallbacks();
  return out;
}

void ExpectTablesAgreeWithLibdw(const std::vector<std::string>& command) {
  SCOPED_TRACE(command.front());
  RecordOptions o;
  o.command = command;
  o.frequency = 2500;
  o.call_graph = CallChainMode::kDwarf;
  o.raw_stacks = true;
  o.handle_signals = false;
  o.symbols = false;
  StringSink sink;
  RecordReport report;
  RunRecord(o, sink, &report);
  ASSERT_GT(report.samples, 1000u);

  uint64_t fallbacks = 0, fallbacks_together = 0;
  auto table = Chains(sink.data(), UnwindMethod::kTable, &fallbacks);
  auto libdw = Chains(sink.data(), UnwindMethod::kLibdw, nullptr);
  ASSERT_EQ(table.size(), libdw.size());
  // Unwound together, the stacks give the same chains, libdw's fallbacks included.
  auto together = Chains(sink.data(), UnwindMethod::kTable, &fallbacks_together, true);
  EXPECT_TRUE(together == table) << "stacks unwound together differ";
  EXPECT_EQ(fallbacks_together, fallbacks);
  // The program's and libc's CFI are expressible but for rare spots (ld.so's lazy-binding
  // trampoline keeps its CFA in rbx while it resolves a PLT call): a sample landing there
  // goes to libdw, and must still agree.
  EXPECT_LE(fallbacks, table.size() / 100);
  size_t equal = 0, user_frames = 0, deep = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    // libdw may add the end-of-copy mark where the tables find no CFI (a pc at the very
    // end of __restore_rt): compare the frames.
    auto strip = [](std::vector<uint64_t> c) {
      if (!c.empty() && c.back() == Session::kTruncatedFrame) c.pop_back();
      return c;
    };
    if (strip(table[i]) == strip(libdw[i])) ++equal;
    else ADD_FAILURE() << "sample " << i << ": the tables and libdw disagree";
    user_frames += table[i].size();
    deep += table[i].size() >= 8;
  }
  EXPECT_EQ(equal, table.size());
  EXPECT_GT(deep, table.size() / 2);  // real stacks, not one-frame chains
  EXPECT_GT(user_frames, table.size() * 5);
}

TEST(UnwindLive, TablesAgreeWithLibdwOnRecordedStacks) {
  if (UnwindProg().empty()) GTEST_SKIP() << "PF_CALLPATH (or PF_UNWIND_PROG) is not set";
  if (!test::PerfEventsUsable()) {
    GTEST_SKIP() << "perf_event_open is refused here (" << std::strerror(errno)
                 << "); see pf-record(1), PERMISSIONS";
  }
  ExpectTablesAgreeWithLibdw({UnwindProg(), "1.5"});
  if (std::getenv("PF_UNWIND_PROG") != nullptr) return;
  // Built without unwind tables: its functions are described in .debug_frame alone.
  ExpectTablesAgreeWithLibdw({UnwindProg() + "_debug_frame", "1.5"});
  // Run in a child whose parent mapped libc low before it forked: the recording keeps that
  // stale copy beside the child's own libc, and both unwinders must use the live one.
  std::string libc;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; libc.empty() && std::getline(maps, line);) {
    size_t at = line.find('/');
    if (at != std::string::npos && line.find("/libc.so.6", at) != std::string::npos) {
      libc = line.substr(at);
    }
  }
  ASSERT_FALSE(libc.empty()) << "no libc.so.6 in /proc/self/maps";
  std::string dir = UnwindProg().substr(0, UnwindProg().rfind('/'));
  ExpectTablesAgreeWithLibdw({dir + "/exec_child", libc, UnwindProg(), "1.5"});
}

// --- names as binutils' addr2line gives them, in the order perf asks ---------------------------

// A stream of one process (pid 7) with `path` mapped at `base`: its samples unwound, as
// pf-record writes them, or raw (stack copies) with DwarfAttr().
struct UnwoundStream {
  std::string bytes;
  StringSink sink;
  BufferedWriter out{sink};
  PerfStreamWriter writer{out};
  static constexpr uint32_t kPid = 7;
  uint64_t time = 1000;
  uint64_t base;
  UnwoundStream(const std::string& path, uint64_t base_address,
                perf_event_attr attr = SampleRewriter::StreamAttr(DwarfAttr(),
                                                                  SampleRewriter::Mode::kUnwind))
      : base(base_address) {
    writer.WriteHeader();
    uint64_t id = 1;
    writer.WriteAttr(attr, std::span<const uint64_t>(&id, 1));
    Map(path);
  }
  // `path` mapped at the base (over what was there).
  void Map(const std::string& path) {
    // MMAP2: pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, name;
    // then the sample id (pid, tid, time).
    std::vector<uint64_t> w = {0,
                               kPid | uint64_t{kPid} << 32,
                               base,
                               0x100000,
                               0,
                               0,
                               0,
                               0,
                               uint64_t{PROT_READ | PROT_EXEC} | uint64_t{MAP_PRIVATE} << 32};
    std::string name = path;
    name.resize((name.size() / 8 + 1) * 8, '\0');
    for (size_t i = 0; i < name.size(); i += 8) {
      uint64_t v;
      std::memcpy(&v, name.data() + i, 8);
      w.push_back(v);
    }
    w.push_back(kPid | uint64_t{kPid} << 32);
    w.push_back(++time);
    Emit(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  }
  void Emit(std::vector<uint64_t>& w, uint32_t type, uint16_t misc) {
    perf_event_header h{type, misc, static_cast<uint16_t>(w.size() * 8)};
    std::memcpy(w.data(), &h, sizeof h);
    writer.WriteRaw(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(w.data()), w.size() * 8));
  }
  void Sample(uint64_t ip) {
    // ip, pid/tid, time, period, the chain as pf-record writes an unwound one.
    std::vector<uint64_t> w = {0, ip, kPid | uint64_t{kPid} << 32, ++time, 1000, 2, kContextUser,
                               ip};
    Emit(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  }
  std::string Finish() {
    out.Flush();
    return sink.data();
  }
};

// Replays `bytes` into `session`, handing `sample` each sample, in the stream's order.
template <typename OnSample>
void ReplaySamples(const std::string& bytes, Session& session, OnSample sample) {
  std::unique_ptr<ByteSource> src = MemoryInput(bytes, "stream");
  PerfDataReader reader(*src);
  Record r;
  while (reader.Next(&r)) {
    if (r.type != kRecordSample) {
      session.OnRecord(reader, r);
      continue;
    }
    Sample s;
    ASSERT_TRUE(reader.ParseSample(r, &s));
    sample(s);
  }
}

// The unwinder's answers are remembered by (maps, pc): a map replaced at the same address
// must not be unwound with the old file's rules. The same stack copy, unwound at a function's
// entry of a binary with CFI, then after a file without any was mapped over it.
TEST(SessionUnwind, RemembersRowsOnlyForTheMapsTheyCameFrom) {
  const std::string path = std::string(PF_PROGRAMS_DIR) + "/internal_cxx";
  std::shared_ptr<const elf::ElfImage> image = elf::ElfImage::Open(path);
  ASSERT_TRUE(image);
  std::unique_ptr<CfiTable> cfi = CfiTable::FromElf(image);
  int text = image->FindSection(".text");
  ASSERT_GE(text, 0);
  const elf::Section& t = image->sections()[static_cast<size_t>(text)];
  // Two pcs at a function's entry (CFA = rsp + 8, the return address at rsp): the sampled
  // one, and the "caller" its return address points after.
  std::vector<uint64_t> entries;
  for (uint64_t pc = t.addr; pc < t.addr + t.size && entries.size() < 2; ++pc) {
    CfiRow row;
    if (cfi->Find(pc, &row) && row.pc == pc && row.cfa == CfiRow::kCfaReg &&
        row.cfa_reg == kDwRsp && row.cfa_offset == 8 && row.ra == CfiRow::kAtCfa &&
        row.ra_offset == -8 && (entries.empty() || pc > entries[0] + 64)) {
      entries.push_back(pc);
    }
  }
  ASSERT_EQ(entries.size(), 2u);

  const uint64_t base = 0x555555554000;
  UnwoundStream stream(path, base, DwarfAttr());
  auto sample = [&] {
    std::vector<uint64_t> w = DwarfSample();
    w[1] = base + entries[0];  // ip
    w[3] = ++stream.time;
    // Registers from w[9]: rsp (7) at the copy, rip (8) the sampled pc; the copy's first word
    // returns into the second function.
    w[9 + 7] = 0x7000;
    w[9 + 8] = base + entries[0];
    w[30] = base + entries[1] + 1;
    stream.Emit(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  };
  sample();
  stream.Map(std::string(PF_SOURCE_DIR) + "/README.md");  // no ELF: no unwind tables
  sample();

  Symbolizer symbolizer(Symbolizer::Options{});
  Session session(symbolizer);
  std::vector<std::vector<uint64_t>> users;  // each sample's user frames
  std::vector<uint64_t> scratch;
  ReplaySamples(stream.Finish(), session, [&](const Sample& s) {
    std::span<const uint64_t> chain = session.Callchain(s, &scratch);
    auto user = std::find(chain.begin(), chain.end(), kContextUser);
    ASSERT_NE(user, chain.end());
    users.emplace_back(user + 1, chain.end());
  });
  ASSERT_EQ(users.size(), 2u);
  ASSERT_GE(users[0].size(), 2u);
  EXPECT_EQ(users[0][0], base + entries[0]);
  EXPECT_EQ(users[0][1], base + entries[1]);  // the return address minus one
  EXPECT_EQ(users[1], (std::vector<uint64_t>{base + entries[0]}));
}

// binutils names a function without a linkage name (a lambda) by its DWARF name while it is
// only asked about addresses inside functions inlined into it, and after the symbol at its
// entry once asked about an address of its own; perf asks about each address once.
TEST(SessionNames, ALambdaIsNamedAsAddr2lineNamedItWhenFirstAsked) {
  const std::string path = std::string(PF_PROGRAMS_DIR) + "/internal_cxx";
  auto dwarf = DwarfInfo::Open(path);
  auto image = elf::ElfImage::Open(path);
  ASSERT_TRUE(dwarf && image);
  int text = image->FindSection(".text");
  ASSERT_GE(text, 0);
  const elf::Section& t = image->sections()[static_cast<size_t>(text)];
  std::vector<uint64_t> in_blend, own;
  for (uint64_t a = t.addr; a < t.addr + t.size; ++a) {
    const DwarfInfo::Location& loc = dwarf->Lookup(a);
    if (loc.function != "operator()" || loc.function_linkage) continue;
    (loc.inlined.empty() ? own : in_blend).push_back(a);
  }
  ASSERT_GE(in_blend.size(), 2u) << "no blend inlined into the lambda";
  ASSERT_FALSE(own.empty()) << "no address of the lambda's own";

  const uint64_t base = 0x555555554000;
  UnwoundStream stream(path, base);
  stream.Sample(base + in_blend[0]);
  stream.Sample(base + own[0]);
  stream.Sample(base + in_blend[1]);
  stream.Sample(base + in_blend[0]);
  Symbolizer symbolizer(Symbolizer::Options{});
  Session session(symbolizer);
  std::vector<std::string> names;  // the frame of the lambda's code, each sample
  std::vector<uint64_t> scratch;
  ReplaySamples(stream.Finish(), session, [&](const Sample& s) {
    std::vector<ResolvedFrame> frames;
    session.Frames(s, session.Callchain(s, &scratch), &frames);
    ASSERT_FALSE(frames.empty());
    const ResolvedFrame& f = frames.back();
    names.push_back(std::string(f.sym) + (f.inlined ? " (inlined)" : ""));
  });
  const std::string lambda = "main::{lambda(int)#1}::operator()";
  EXPECT_EQ(names, (std::vector<std::string>{"operator() (inlined)", lambda, lambda,
                                             "operator() (inlined)"}));
}

// A recording's binaries are loaded ahead: their symbols always, their DWARF only when it will
// be read (for inline frames, which only frames unwound from stack copies get, or for source
// lines), and unwind tables only for stack copies.
TEST(Prefetch, LoadsOnlyWhatWillBeRead) {
  // perf record -g (frame pointers) of callpath, with a build-id table naming it.
  std::string data = test::ReadFile(std::string(PF_SOURCE_DIR) +
                                    "/tests/fuzz/corpus/perf_data/file.data");
  ASSERT_FALSE(data.empty());
  for (bool srcline : {false, true}) {
    std::unique_ptr<ByteSource> src = MemoryInput(data, "file.data");
    PerfDataReader reader(*src);
    ASSERT_FALSE(reader.build_ids().empty());
    Symbolizer symbolizer(Symbolizer::Options{});
    Session session(symbolizer);
    session.SetSrcline(srcline);
    session.Prefetch(reader);
    EXPECT_GE(SessionTestPeer::PrefetchPlan(session).binaries, 1u);
    EXPECT_EQ(SessionTestPeer::PrefetchPlan(session).dwarf, srcline) << "srcline " << srcline;
    EXPECT_FALSE(SessionTestPeer::PrefetchPlan(session).unwind_tables);
  }
}

// Kernel symbols are read ahead only when the recording will likely need them: perf's
// build-id table lists the binaries its samples hit, and a pipe carries none up front.
TEST(PrefetchKernel, OnlyWhenTheBuildIdTableNamesTheKernel) {
  const std::string dir = std::string(PF_SOURCE_DIR) + "/tests/fuzz/corpus/perf_data/";
  for (const char* name : {"file.data", "pipe.data"}) {
    SCOPED_TRACE(name);
    std::string data = test::ReadFile(dir + name);
    ASSERT_FALSE(data.empty());
    std::unique_ptr<ByteSource> src = MemoryInput(data, name);
    PerfDataReader reader(*src);
    ASSERT_FALSE(reader.attrs().empty());
    EXPECT_FALSE(reader.attrs()[0].exclude_kernel());
    // file.data: perf record -g of callpath, whose samples all hit user space.
    EXPECT_EQ(reader.build_ids().empty(), std::string(name) == "pipe.data");
    EXPECT_EQ(KernelSampled(reader), std::string(name) == "pipe.data");
    EXPECT_EQ(KernelBuildId(reader), "");
    Symbolizer symbolizer(Symbolizer::Options{});
    Session session(symbolizer);
    session.Prefetch(reader);
    EXPECT_EQ(SessionTestPeer::PrefetchPlan(session).kernel, std::string(name) == "pipe.data");
  }
}

}  // namespace
}  // namespace pf
