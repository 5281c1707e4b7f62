// gperftools' profiles (formats/gperftools.h, collapse/gperftools.h): crafted CPU profiles in
// every word size and byte order, pprof's frame fix-ups, cut and lying inputs, heap profiles
// with and without alloc values, heap_v2 unsampling, and the missing-binary warning. Real
// profiles against pprof: tests/e2e/gperftools_test.sh.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "collapse/gperftools.h"
#include "collapse/profiles.h"
#include "formats/gperftools.h"
#include "formats/sniff.h"
#include "io/gzip_writer.h"
#include "io/input.h"
#include "io/output.h"

namespace pf {
namespace {

// A CPU profile of words of `size` bytes in `big` or little byte order.
class CpuProfileWriter {
 public:
  CpuProfileWriter(int size, bool big, uint64_t period = 10000) : size_(size), big_(big) {
    for (uint64_t w : {uint64_t{0}, uint64_t{3}, uint64_t{0}, period, uint64_t{0}}) Word(w);
  }
  void Word(uint64_t v) {
    for (int i = 0; i < size_; ++i) {
      int shift = 8 * (big_ ? size_ - 1 - i : i);
      out_.push_back(static_cast<char>(v >> shift & 0xff));
    }
  }
  void Record(uint64_t count, std::vector<uint64_t> pcs) {
    Word(count);
    Word(pcs.size());
    for (uint64_t pc : pcs) Word(pc);
  }
  std::string End(const std::string& maps) {
    Record(0, {0});
    return out_ + maps;
  }
  const std::string& bytes() const { return out_; }

 private:
  int size_;
  bool big_;
  std::string out_;
};

std::vector<uint64_t> StackOf(const GperftoolsProfile& p, size_t i) {
  const auto& s = p.stacks[i];
  return {p.addresses.begin() + s.first, p.addresses.begin() + s.first + s.depth};
}

TEST(GperftoolsCpu, EveryWordSizeAndByteOrderReads) {
  for (int size : {4, 8}) {
    for (bool big : {false, true}) {
      CpuProfileWriter w(size, big, 5000);
      w.Record(3, {0x1010, 0x2020, 0x3030});
      w.Record(1, {0x1010, 0x2120});  // (another second frame: pprof drops a shared one)
      std::string data = w.End(
          "00400000-00401000 r-xp 00000000 08:01 42 /bin/prog\n"
          "00601000-00602000 rw-p 00001000 08:01 42 /bin/prog\n");
      SCOPED_TRACE(std::to_string(size) + (big ? " big" : " little"));
      EXPECT_EQ(SniffFormat(data), InputFormat::kGperftoolsCpu);
      ReadReport report;
      GperftoolsProfile p = ParseGperftoolsCpu(data, "cpu.prof", &report);
      EXPECT_TRUE(report.warnings.empty());
      EXPECT_EQ(p.period, 5000u);
      ASSERT_EQ(p.stacks.size(), 2u);
      // Callers are looked up on their call instruction: return address minus one.
      EXPECT_EQ(StackOf(p, 0), (std::vector<uint64_t>{0x1010, 0x201f, 0x302f}));
      EXPECT_EQ(p.values, (std::vector<uint64_t>{3, 3 * 5000 * 1000ull, 1, 5000 * 1000}));
      ASSERT_EQ(p.types.size(), 2u);
      EXPECT_EQ(p.types[0].name, "samples");
      EXPECT_EQ(p.types[1].name, "cpu");
      EXPECT_EQ(p.types[1].unit, WeightUnit::kNanoseconds);
      ASSERT_EQ(p.mappings.size(), 1u);  // only the executable one
      EXPECT_EQ(p.mappings[0].path, "/bin/prog");
      EXPECT_EQ(p.mappings[0].start, 0x400000u);
    }
  }
}

TEST(GperftoolsCpu, HeaderMustReadRight) {
  CpuProfileWriter w(8, false);
  std::string data = w.End("");
  data[8] = 4;  // the second word is 3
  EXPECT_NE(SniffFormat(data), InputFormat::kGperftoolsCpu);
  ReadReport report;
  EXPECT_THROW(ParseGperftoolsCpu(data, "x", &report), Error);
  // A Java profile (third word 1) is recognised and refused.
  std::string java = CpuProfileWriter(8, false).End("");
  java[16] = 1;
  EXPECT_EQ(SniffFormat(java), InputFormat::kGperftoolsCpu);
  EXPECT_THROW(ParseGperftoolsCpu(java, "x", &report), Error);
}

TEST(GperftoolsCpu, PprofsFixUpsOfTheSignalFrames) {
  // Every record's second frame is the handler's 0x9000: dropped (pprof's rule: all but one
  // in 32 records share it). A leaf repeated as the next frame (+1) is dropped too.
  CpuProfileWriter w(8, false);
  w.Record(1, {0x1000, 0x9000, 0x2000});
  w.Record(1, {0x1100, 0x9000, 0x2000});
  w.Record(1, {0x1200, 0x9000, 0x1200, 0x2000});
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsCpu(w.End(""), "x", &report);
  ASSERT_EQ(p.stacks.size(), 3u);
  EXPECT_EQ(StackOf(p, 0), (std::vector<uint64_t>{0x1000, 0x1fff}));
  EXPECT_EQ(StackOf(p, 1), (std::vector<uint64_t>{0x1100, 0x1fff}));
  EXPECT_EQ(StackOf(p, 2), (std::vector<uint64_t>{0x1200, 0x1fff}));
}

TEST(GperftoolsCpu, CutAndLyingProfilesKeepWhatCameBefore) {
  CpuProfileWriter w(8, false);
  w.Record(2, {0x1000, 0x2000});
  w.Record(4, {0x3000, 0x2000});
  std::string whole = w.End("");
  for (size_t cut = 40; cut < whole.size() - 8; ++cut) {
    ReadReport report;
    GperftoolsProfile p = ParseGperftoolsCpu(whole.substr(0, cut), "cut.prof", &report);
    ASSERT_EQ(report.warnings.size(), 1u) << cut;
    EXPECT_NE(report.warnings[0].find("cut short"), std::string::npos);
    EXPECT_LE(p.stacks.size(), 2u);
  }
  // A depth larger than the file: the records before it are kept.
  CpuProfileWriter lying(8, false);
  lying.Record(2, {0x1000});
  lying.Word(7);
  lying.Word(uint64_t{1} << 62);
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsCpu(lying.bytes(), "lying.prof", &report);
  EXPECT_EQ(p.stacks.size(), 1u);
  EXPECT_EQ(report.warnings.size(), 1u);
  // A count that overflows the nanoseconds saturates.
  CpuProfileWriter huge(8, false, 1000000);
  huge.Record(UINT64_MAX / 2, {0x1000});
  p = ParseGperftoolsCpu(huge.End(""), "huge.prof", &report);
  EXPECT_EQ(p.values[1], UINT64_MAX);
}

// A period whose nanoseconds pass 2^64 saturates too (it wrapped: 2^62 us gave 2^64 -
// 2^62 * 24 ns... a small wrong number), with a warning; a whole profile without the maps
// text after its samples says its frames are unnamed.
TEST(GperftoolsCpu, OverflowingPeriodsAndMissingMapsAreWarnings) {
  CpuProfileWriter w(8, false, uint64_t{1} << 62);
  w.Record(1, {0x1000});
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsCpu(w.End(""), "odd.prof", &report);
  ASSERT_EQ(p.values.size(), 2u);
  EXPECT_EQ(p.values[1], UINT64_MAX);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_NE(report.warnings[0].find("no memory map"), std::string::npos) << report.warnings[0];
  EXPECT_NE(report.warnings[1].find("passed 2^64-1 ns"), std::string::npos) << report.warnings[1];
}

TEST(GperftoolsHeap, ValuesAsPprofChoosesThem) {
  std::string with_alloc =
      "heap profile:   3:  300 [   5:  900] @ heapprofile\n"
      "     2:   200 [     3:   600] @ 0x1000 0x2000\n"
      "     1:   100 [     2:   300] @ 0x1100\n"
      "\n"
      "MAPPED_LIBRARIES:\n"
      "00400000-00401000 r-xp 00000000 08:01 42 /bin/prog\n";
  EXPECT_EQ(SniffFormat(with_alloc), InputFormat::kGperftoolsHeap);
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsHeap(with_alloc, "h", &report);
  ASSERT_EQ(p.types.size(), 4u);
  EXPECT_EQ(p.types[0].name, "alloc_objects");
  EXPECT_EQ(p.types[1].name, "alloc_space");
  EXPECT_EQ(p.types[3].name, "inuse_space");  // the last: the default, as pprof's
  EXPECT_EQ(p.types[3].unit, WeightUnit::kBytes);
  EXPECT_EQ(p.types[2].unit, WeightUnit::kObjects);
  EXPECT_EQ(p.values, (std::vector<uint64_t>{3, 600, 2, 200, 2, 300, 1, 100}));
  EXPECT_EQ(StackOf(p, 0), (std::vector<uint64_t>{0x1000, 0x1fff}));
  ASSERT_EQ(p.mappings.size(), 1u);
  EXPECT_TRUE(report.warnings.empty());
  // Allocated totals equal to the in-use ones: pprof keeps the in-use pair alone.
  std::string inuse_only =
      "heap profile:   1:  100 [   1:  100] @ heapprofile\n"
      "     1:   100 [     1:   100] @ 0x1000\n";
  p = ParseGperftoolsHeap(inuse_only, "h", &report);
  ASSERT_EQ(p.types.size(), 2u);
  EXPECT_EQ(p.types[0].name, "inuse_objects");
  EXPECT_EQ(p.values, (std::vector<uint64_t>{1, 100}));
}

TEST(GperftoolsHeap, SampledProfilesAreUnsampledAsPprofDoes) {
  uint64_t n = 8, b = 8 << 20;
  UnsampleHeap(&n, &b, 524288);
  EXPECT_EQ(b, 9701573u);  // Go pprof and google-pprof on the same stack
  EXPECT_EQ(n, 9u);
  n = 0, b = 5;
  UnsampleHeap(&n, &b, 524288);
  EXPECT_EQ(b, 0u);
  n = 2, b = 64;
  UnsampleHeap(&n, &b, 1);  // rate 1: not sampled
  EXPECT_EQ(b, 64u);
  std::string v2 =
      "heap profile:   8: 8388608 [   0:  0] @ heap_v2/524288\n"
      "     8: 8388608 [     0:   0] @ 0x1000\n";
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsHeap(v2, "v2", &report);
  EXPECT_EQ(p.period, 524288u);
  EXPECT_EQ(p.values, (std::vector<uint64_t>{9, 9701573}));
  EXPECT_FALSE(report.notices.empty());  // said to be estimates
  // "heap/RATE" samples every RATE/2 bytes.
  std::string v1 = "heap profile: 8: 8388608 [ 0: 0] @ heap/1048576\n8: 8388608 [0: 0] @ 0x1000\n";
  p = ParseGperftoolsHeap(v1, "v1", &report);
  EXPECT_EQ(p.period, 524288u);
}

TEST(GperftoolsHeap, MalformedLinesAreCounted) {
  std::string text =
      "heap profile:   3:  300 [   5:  900] @ heapprofile\n"
      "     2:   200 [     3:   600] @ 0x1000 0xzz\n"
      "garbage\n"
      "    -1:   100 [     2:   300] @ 0x1100\n"
      "     1:   100 [     2:   300] @ 0x1200\n";
  ReadReport report;
  GperftoolsProfile p = ParseGperftoolsHeap(text, "h", &report);
  EXPECT_EQ(p.stacks.size(), 1u);
  // Two malformed lines, one negative count, no maps section.
  ASSERT_EQ(report.warnings.size(), 3u);
  EXPECT_NE(report.warnings[0].find("2 lines skipped"), std::string::npos);
  EXPECT_NE(report.warnings[0].find("h:2"), std::string::npos);
  EXPECT_THROW(ParseGperftoolsHeap("heap profile: x\n", "h", &report), Error);
  EXPECT_THROW(ParseGperftoolsHeap("heap profile: 1: 1 [1: 1] @ growthz\n", "h", &report), Error);
}

TEST(GperftoolsRead, MissingBinariesAreListedWithWhereToPutThem) {
  CpuProfileWriter w(8, false);
  w.Record(3, {0x401010, 0x402020});
  w.Record(1, {0x9000});  // in no mapping
  std::string data = w.End("00400000-00500000 r-xp 00000000 08:01 42 /nonexistent/lib/libc-2.31.so\n");
  std::unique_ptr<ByteSource> in = MemoryInput(data, "cpu.prof");
  ReadReport report;
  ProfileOptions options;
  Symbolizer::Options symbols;
  symbols.use_build_id_cache = false;
  StackTree tree = ReadProfile(InputFormat::kGperftoolsCpu, *in, options, symbols, &report);
  ASSERT_EQ(tree.columns(), 2);
  EXPECT_EQ(tree.Total(0), 4u);
  EXPECT_EQ(tree.Total(1), 4u * 10000 * 1000);
  ASSERT_EQ(report.warnings.size(), 1u);
  const std::string& w0 = report.warnings[0];
  EXPECT_NE(w0.find("/nonexistent/lib/libc-2.31.so"), std::string::npos) << w0;
  EXPECT_NE(w0.find("3 of 4 samples"), std::string::npos) << w0;
  EXPECT_NE(w0.find("--symfs=DIR"), std::string::npos) << w0;
  EXPECT_NE(w0.find("[libc-2.31.so]"), std::string::npos) << w0;
  // The frames are the file's name, as perf shows an address without a symbol.
  StrId libc = tree.names().Intern("[libc-2.31.so]");
  NodeId a = tree.Child(StackTree::kRoot, libc);
  NodeId b = tree.Child(a, libc);
  EXPECT_EQ(tree.self(b, 0), 3u);
  // pprof's -sample_index: cpu by default (Go pprof's), samples when asked.
  EXPECT_EQ(OneValue(tree).sample_type().name, "cpu");
  EXPECT_EQ(OneValue(tree).Total(), 4u * 10000 * 1000);
  EXPECT_EQ(OneValue(tree, "samples").Total(), 4u);
}

TEST(GperftoolsRead, HeapValuesDefaultToInuseSpace) {
  std::string text =
      "heap profile:   3:  300 [   5:  900] @ heapprofile\n"
      "     2:   200 [     3:   600] @ 0x1000 0x2000\n"
      "     0:     0 [     2:   300] @ 0x1100\n"
      "MAPPED_LIBRARIES:\n";
  std::unique_ptr<ByteSource> in = MemoryInput(text, "heap");
  ReadReport report;
  StackTree tree = ReadProfile(InputFormat::kGperftoolsHeap, *in, {}, {}, &report);
  ASSERT_EQ(tree.columns(), 4);
  EXPECT_EQ(OneValue(tree).sample_type().name, "inuse_space");
  EXPECT_EQ(OneValue(tree).unit(), WeightUnit::kBytes);
  EXPECT_EQ(OneValue(tree).Total(), 200u);
  EXPECT_EQ(OneValue(tree, "alloc_space").Total(), 900u);
  EXPECT_EQ(OneValue(tree, "alloc_objects").Total(), 5u);
  EXPECT_EQ(OneValue(tree, "inuse_objects").unit(), WeightUnit::kObjects);
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

std::string Gzipped(const std::string& data) {
  StringSink sink;
  WriteGzip(data, sink);
  return sink.data();
}

// Decompressed input past the cap ends with an error naming it, not with all of it in memory
// (a gzip bomb after a real header); the cap is 1 GiB, 10000 bytes here.
TEST(GperftoolsGather, DecompressedSizeIsCapped) {
  std::string gz = Gzipped("heap profile:    1:  1024 [    1:  1024] @ heapprofile\n" +
                           std::string(100000, 'a'));
  std::unique_ptr<ByteSource> in = MemoryInput(gz, "bomb.heap.gz");
  std::string storage;
  try {
    GatherGperftoolsBytes(*in, false, &storage, 10000);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "bomb.heap.gz");
    EXPECT_NE(std::string(e.what()).find("more than 10000 bytes"), std::string::npos) << e.what();
  }
  EXPECT_LE(storage.size(), 10000u);
}

// What has no header of the format is refused from its first bytes, before the rest is
// gathered (gzipped zeros given as -f gperftools-cpu or -heap).
TEST(GperftoolsGather, NoHeaderStopsAtOnce) {
  std::string gz = Gzipped(std::string(size_t{16} << 20, '\0'));
  for (bool cpu : {true, false}) {
    std::unique_ptr<ByteSource> in = MemoryInput(gz, "zeros.gz");
    std::string storage;
    try {
      GatherGperftoolsBytes(*in, cpu, &storage);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(cpu ? "not a gperftools CPU profile"
                                               : "not a gperftools heap profile"),
                std::string::npos)
          << e.what();
    }
    EXPECT_LE(storage.size(), size_t{4} << 20);  // the first chunk of the 16 MiB
  }
}

}  // namespace
}  // namespace pf
