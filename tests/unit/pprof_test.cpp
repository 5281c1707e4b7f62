// pprof profile.proto input (formats/pprof.h, collapse/pprof_read.h): profiles encoded by
// hand with protozero's writer for the cases real profiles rarely show (a default sample
// type that is not the last, inlined functions, labels of both kinds, negative values,
// time in microseconds, unpacked repeated fields, addresses without functions) and for bad
// input (ids that name nothing, strings outside the table, values that do not match the
// sample types, every truncation): each reads as pprof reads it or ends in a pf::Error.
// The checked-in real profiles are sniffed and read here too.
#include "collapse/pprof_read.h"

#include <gtest/gtest.h>

#include <map>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/pprof.h"
#include "formats/sniff.h"
#include "io/gzip_writer.h"
#include "io/input.h"
#include "io/output.h"
#include "test_util.h"

namespace pf {
namespace {

// A profile.proto written field by field; strings are interned into its table.
class ProfileWriter {
 public:
  ProfileWriter() { Str(""); }
  int64_t Str(const std::string& s) {
    auto [it, added] = index_.emplace(s, static_cast<int64_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  void SampleType(const std::string& type, const std::string& unit) {
    std::string v;
    protozero::pbf_writer w(v);
    w.add_int64(1, Str(type));
    w.add_int64(2, Str(unit));
    body_.add_message(1, v);
  }
  void Function(uint64_t id, const std::string& name) {
    std::string v;
    protozero::pbf_writer w(v);
    w.add_uint64(1, id);
    w.add_int64(2, Str(name));
    body_.add_message(5, v);
  }
  void Mapping(uint64_t id, const std::string& file, uint64_t start = 0x400000) {
    std::string v;
    protozero::pbf_writer w(v);
    w.add_uint64(1, id);
    w.add_uint64(2, start);
    w.add_uint64(3, start + 0x10000);
    w.add_int64(5, Str(file));
    body_.add_message(3, v);
  }
  // A location with these functions, innermost first (pprof's order), or an address only.
  void Location(uint64_t id, std::vector<uint64_t> functions, uint64_t mapping = 0,
                uint64_t address = 0) {
    std::string v;
    protozero::pbf_writer w(v);
    w.add_uint64(1, id);
    if (mapping) w.add_uint64(2, mapping);
    if (address) w.add_uint64(3, address);
    for (uint64_t f : functions) {
      std::string line;
      protozero::pbf_writer lw(line);
      lw.add_uint64(1, f);
      lw.add_int64(2, 10);
      w.add_message(4, line);
    }
    body_.add_message(4, v);
  }
  struct Label {
    std::string key, str;
    int64_t num = 0;
    std::string unit;
  };
  // Locations leaf first, as pprof.
  void Sample(std::vector<uint64_t> locations, std::vector<int64_t> values,
              std::vector<Label> labels = {}, bool packed = true) {
    std::string v;
    protozero::pbf_writer w(v);
    if (packed) {
      w.add_packed_uint64(1, locations.begin(), locations.end());
      w.add_packed_int64(2, values.begin(), values.end());
    } else {
      for (uint64_t l : locations) w.add_uint64(1, l);
      for (int64_t x : values) w.add_int64(2, x);
    }
    for (const Label& l : labels) {
      std::string lv;
      protozero::pbf_writer lw(lv);
      lw.add_int64(1, Str(l.key));
      if (!l.str.empty()) lw.add_int64(2, Str(l.str));
      if (l.num) lw.add_int64(3, l.num);
      if (!l.unit.empty()) lw.add_int64(4, Str(l.unit));
      w.add_message(3, lv);
    }
    body_.add_message(2, v);
  }
  void DefaultSampleType(const std::string& type) { body_.add_int64(14, Str(type)); }
  void Raw(uint32_t tag, int64_t value) { body_.add_int64(tag, value); }
  void DropFrames(const std::string& rx) { body_.add_int64(7, Str(rx)); }
  void KeepFrames(const std::string& rx) { body_.add_int64(8, Str(rx)); }
  // The message: the fields, then the string table (Go writes it last too).
  std::string Done() {
    std::string out = data_;
    protozero::pbf_writer w(out);
    for (const std::string& s : strings_) w.add_string(6, s);
    return out;
  }

 private:
  std::string data_;
  protozero::pbf_writer body_{data_};
  std::vector<std::string> strings_;
  std::map<std::string, int64_t> index_;
};

StackTree Read(const std::string& proto, ReadReport* report = nullptr,
               std::vector<std::string> tags = {}) {
  PprofProfile p = DecodePprof(proto, "t.pb");
  return PprofTree(p, "t.pb", tags, nullptr, report);
}

// "root;...;leaf" -> weight of column `column`, for every stack with a weight there.
std::map<std::string, uint64_t> Stacks(const StackTree& tree, int column = 0) {
  std::map<std::string, uint64_t> out;
  tree.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    if (!tree.self(n, column)) return;
    std::string s;
    for (NodeId p : path) {
      if (!s.empty()) s += ';';
      s += tree.name(p);
    }
    out[s] += tree.self(n, column);
  });
  return out;
}

// main -> work (inlining helper) -> leaf, twice; a second stack main -> other.
std::string Basic(ProfileWriter& w) {
  w.SampleType("samples", "count");
  w.SampleType("cpu", "nanoseconds");
  w.Function(1, "main");
  w.Function(2, "work");
  w.Function(3, "helper");
  w.Function(4, "leaf");
  w.Function(5, "other");
  w.Location(10, {1});
  w.Location(11, {3, 2});  // helper inlined into work
  w.Location(12, {4});
  w.Location(13, {5});
  w.Sample({12, 11, 10}, {2, 20000000});
  w.Sample({13, 10}, {1, 10000000});
  w.Sample({12, 11, 10}, {3, 30000000}, {}, /*packed=*/false);
  return w.Done();
}

TEST(Pprof, StacksRootFirstWithInlinedFramesAndOneColumnPerSampleType) {
  ProfileWriter w;
  ReadReport report;
  StackTree tree = Read(Basic(w), &report);
  ASSERT_EQ(tree.columns(), 2);
  EXPECT_EQ(tree.sample_type(0), (SampleType{"samples", WeightUnit::kSamples}));
  EXPECT_EQ(tree.sample_type(1), (SampleType{"cpu", WeightUnit::kNanoseconds}));
  std::map<std::string, uint64_t> want{{"main;work;helper;leaf", 5}, {"main;other", 1}};
  EXPECT_EQ(Stacks(tree, 0), want);
  EXPECT_EQ(Stacks(tree, 1)["main;work;helper;leaf"], 50000000u);
  EXPECT_EQ(report.samples, 3u);
  // pprof's default is the last sample type.
  EXPECT_EQ(OneValue(tree).sample_type().name, "cpu");
}

TEST(Pprof, DefaultSampleTypeNotLastIsTheDefaultColumn) {
  ProfileWriter w;
  w.SampleType("alloc_objects", "count");
  w.SampleType("alloc_space", "bytes");
  w.SampleType("inuse_objects", "count");
  w.SampleType("inuse_space", "bytes");
  w.DefaultSampleType("alloc_space");
  w.Function(1, "main");
  w.Location(1, {1});
  w.Sample({1}, {1, 100, 0, 0});
  StackTree tree = Read(w.Done());
  ASSERT_EQ(tree.columns(), 4);
  EXPECT_EQ(tree.sample_type(1).name, "alloc_space");  // the profile's order: -sample_index's
  EXPECT_EQ(tree.default_column(), 1);
  EXPECT_EQ(tree.sample_type(0), (SampleType{"alloc_objects", WeightUnit::kObjects}));
  EXPECT_EQ(tree.sample_type(3).unit, WeightUnit::kBytes);
  EXPECT_EQ(OneValue(tree, "1").Total(), 100u);  // -sample_index=1
  StackTree one = OneValue(tree);
  EXPECT_EQ(one.sample_type().name, "alloc_space");
  EXPECT_EQ(one.Total(), 100u);
  EXPECT_EQ(OneValue(tree, "alloc_objects").Total(), 1u);
}

// pprof -proto of a gperftools heap profile names what is in use "objects" and "space";
// pprof's -sample_index takes inuse_objects and inuse_space for them.
TEST(Pprof, LegacyHeapSampleTypesAnswerToTheirInuseNames) {
  ProfileWriter w;
  w.SampleType("objects", "count");
  w.SampleType("space", "bytes");
  w.Function(1, "main");
  w.Location(1, {1});
  w.Sample({1}, {2, 128});
  StackTree tree = Read(w.Done());
  EXPECT_EQ(tree.sample_type(0), (SampleType{"objects", WeightUnit::kObjects}));
  EXPECT_EQ(OneValue(tree, "inuse_space").Total(), 128u);
  EXPECT_EQ(OneValue(tree, "inuse_objects").Total(), 2u);
  EXPECT_EQ(tree.FindSampleType("inuse_cycles"), -1);
}

TEST(Pprof, UnitsOfOtherSampleTypes) {
  ProfileWriter w;
  w.SampleType("delay", "microseconds");
  w.SampleType("contentions", "count");
  w.SampleType("cycles", "cycles");
  w.Function(1, "lock");
  w.Location(1, {1});
  w.Sample({1}, {7, 2, 9});
  StackTree tree = Read(w.Done());
  EXPECT_EQ(tree.sample_type(0), (SampleType{"delay", WeightUnit::kNanoseconds}));
  EXPECT_EQ(tree.Total(0), 7000u);  // microseconds to nanoseconds
  EXPECT_EQ(tree.sample_type(1).unit, WeightUnit::kSamples);
  EXPECT_EQ(tree.sample_type(2).unit, WeightUnit::kEvents);
}

TEST(Pprof, TagsAreRootFramesInTheirOrder) {
  ProfileWriter w;
  w.SampleType("samples", "count");
  w.Function(1, "main");
  w.Location(1, {1});
  w.Sample({1}, {1}, {{"worker", "a"}, {"thread", "t1"}});
  w.Sample({1}, {2}, {{"worker", "b"}, {"worker", "c"}});
  w.Sample({1}, {4});
  w.Sample({1}, {8}, {{"bytes", "", 65536}, {"wait", "", 1500000, "nanoseconds"}});
  w.Sample({1}, {16}, {{"size", "", 3, "pages"}});
  std::string proto = w.Done();
  StackTree tree = Read(proto, nullptr, {"thread", "worker", "bytes", "wait", "size"});
  std::map<std::string, uint64_t> want{
      {"thread:t1;worker:a;main", 1}, {"worker:b,c;main", 2},        {"main", 4},
      {"bytes:64kB;wait:1.50ms;main", 8}, {"size:3pages;main", 16},
  };
  EXPECT_EQ(Stacks(tree), want);
  // Without tags, the labels change nothing.
  EXPECT_EQ(Stacks(Read(proto)), (std::map<std::string, uint64_t>{{"main", 31}}));
}

// pprof prunes with the profile's drop_frames (whole names, argument lists removed) unless
// keep_frames matches, from the first location below the root that is not dropped
// (pprof -traces on such a profile: main 5, main;other 9, malloc 1).
TEST(Pprof, DropFramesPruneAsPprofDoes) {
  ProfileWriter w;
  w.SampleType("samples", "count");
  w.Function(1, "main");
  w.Function(2, "malloc(unsigned long)");
  w.Function(3, "inner");
  w.Function(4, "other");
  w.Function(5, "malloc_kept");
  w.Location(1, {1});
  w.Location(2, {2});
  w.Location(3, {3});
  w.Location(4, {4});
  w.Location(5, {3, 4});  // inner inlined into other
  w.Location(6, {5});
  w.Sample({3, 2, 1}, {5});
  w.Sample({4, 1}, {7});
  w.Sample({2}, {1});  // nothing above it: kept
  w.Sample({5, 1}, {2});
  w.Sample({6, 1}, {16});
  w.DropFrames("malloc.*|inner");
  w.KeepFrames("malloc_kept");
  StackTree tree = Read(w.Done());
  std::map<std::string, uint64_t> want{
      {"main", 5}, {"main;other", 9}, {"malloc(unsigned long)", 1}, {"main;malloc_kept", 16}};
  EXPECT_EQ(Stacks(tree), want);
}

TEST(Pprof, NegativeValuesAreLeftOutAndCounted) {
  ProfileWriter w;
  w.SampleType("cpu", "nanoseconds");
  w.Function(1, "main");
  w.Function(2, "gone");
  w.Location(1, {1});
  w.Location(2, {2});
  w.Sample({1}, {5});
  w.Sample({2, 1}, {-3});
  ReadReport report;
  StackTree tree = Read(w.Done(), &report);
  EXPECT_EQ(Stacks(tree), (std::map<std::string, uint64_t>{{"main", 5}}));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("1 negative value"), std::string::npos) << report.warnings[0];
}

TEST(Pprof, AddressesWithoutFunctionsAreNamedAsPprofNamesThem) {
  ProfileWriter w;
  w.SampleType("samples", "count");
  w.Function(1, "");  // a function without a name
  w.Mapping(1, "/nonexistent/libfoo.so");
  w.Location(1, {}, 1, 0x401234);
  w.Location(2, {}, 0, 0x999);
  w.Location(3, {1}, 1, 0x401000);
  w.Sample({1, 2, 3}, {1});
  Symbolizer::Options symbols;
  symbols.use_build_id_cache = false;
  ReadReport report;
  std::string proto = w.Done();
  PprofProfile p = DecodePprof(proto, "t.pb");
  StackTree tree = PprofTree(p, "t.pb", {}, &symbols, &report);
  EXPECT_EQ(Stacks(tree),
            (std::map<std::string, uint64_t>{{"[libfoo.so];<unknown>;[libfoo.so]", 1}}));
  ASSERT_EQ(report.warnings.size(), 1u);  // the address in a binary pf did not find
  EXPECT_NE(report.warnings[0].find("--symfs"), std::string::npos);
}

// Every id a sample or location names must exist; every string index must be in the table.
TEST(Pprof, BadReferencesAreErrors) {
  auto error = [](const std::string& proto) {
    try {
      Read(proto);
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "t.pb");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.Sample({7}, {1});
    EXPECT_NE(error(w.Done()).find("names location 7"), std::string::npos);
  }
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.Location(1, {42});
    EXPECT_NE(error(w.Done()).find("names function 42"), std::string::npos);
  }
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.Location(1, {}, 3, 0x10);
    EXPECT_NE(error(w.Done()).find("names mapping 3"), std::string::npos);
  }
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.Raw(14, 99);  // default_sample_type: no such string
    EXPECT_NE(error(w.Done()).find("string index 99"), std::string::npos);
  }
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.SampleType("cpu", "nanoseconds");
    w.Function(1, "main");
    w.Location(1, {1});
    w.Sample({1}, {1});
    EXPECT_NE(error(w.Done()).find("1 values for 2 sample types"), std::string::npos);
  }
  {
    ProfileWriter w;
    w.SampleType("samples", "count");
    w.Function(1, "a");
    w.Function(1, "b");
    EXPECT_NE(error(w.Done()).find("two functions with id 1"), std::string::npos);
  }
}

// Every prefix of a valid profile, and every one-byte change of it, reads or ends in a
// pf::Error: never a crash (run under ASan by the integrator's sanitized build).
TEST(Pprof, TruncatedAndCorruptInputEndsInAnError) {
  ProfileWriter w;
  std::string proto = Basic(w);
  for (size_t n = 0; n < proto.size(); ++n) {
    std::string cut = proto.substr(0, n);
    try {
      Read(cut);
    } catch (const Error&) {
    }
  }
  for (size_t i = 0; i < proto.size(); ++i) {
    for (unsigned char x : {0x00, 0x7f, 0xff}) {
      std::string bad = proto;
      bad[i] = static_cast<char>(x);
      try {
        Read(bad);
      } catch (const Error&) {
      }
    }
  }
  // A length that says more than there is.
  std::string lying = proto;
  lying[1] = 0x7f;
  EXPECT_THROW(Read(lying), Error);
}

// protozero keeps the low 32 bits of a length: a length of 2^40 would read as 0, one of
// 2^32 + 2 as 2. Both are errors, not a profile misread.
TEST(Pprof, LengthsPast32BitsAreErrors) {
  // Field 1 (a sample type) of length 2^40, alone: read as an empty sample type, the
  // profile was empty, exit 0.
  EXPECT_THROW(Read(std::string("\x0a\x80\x80\x80\x80\x80\x20", 7)), Error);
  // A sample whose packed location ids claim 2^32 + 2 bytes, after a valid profile: read
  // as the two ids 12 and 10 (a stack main;leaf).
  ProfileWriter w;
  std::string proto = Basic(w);
  proto += std::string("\x12\x0b\x0a\x82\x80\x80\x80\x10\x0c\x0a\x12\x01\x05", 13);
  try {
    Read(proto);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("end of buffer"), std::string::npos) << e.what();
  }
}

// Decompressed input past the cap ends with an error naming it, not with all of it in memory
// (a gzip bomb); the cap is 2 GiB, 1000 bytes here.
TEST(Pprof, DecompressedSizeIsCapped) {
  std::string gz = test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/pprof/heap.pb.gz");
  std::unique_ptr<ByteSource> in = MemoryInput(gz, "bomb.pb.gz");
  std::string storage;
  try {
    GatherPprofBytes(*in, &storage, 1000);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "bomb.pb.gz");
    EXPECT_NE(std::string(e.what()).find("larger than 1000 bytes"), std::string::npos)
        << e.what();
  }
  EXPECT_LE(storage.size(), 1000u);
  std::unique_ptr<ByteSource> whole = MemoryInput(gz, "heap.pb.gz");
  storage.clear();
  EXPECT_GT(GatherPprofBytes(*whole, &storage).size(), 5000u);
}

// Bytes that can never be a profile (zeros: field 0) end the gathering where they start, not
// at the cap with all of them in memory: a real profile followed by a gzip bomb of zeros.
TEST(Pprof, GatheringStopsAtTheFirstBadField) {
  std::string gz = test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/pprof/heap.pb.gz");
  std::string raw;
  {
    std::unique_ptr<ByteSource> in = MemoryInput(gz, "heap.pb.gz");
    raw = std::string(GatherPprofBytes(*in, &raw));
  }
  StringSink sink;
  WriteGzip(raw + std::string(size_t{16} << 20, '\0'), sink);
  std::unique_ptr<ByteSource> in = MemoryInput(sink.data(), "bomb.pb.gz");
  std::string storage;
  try {
    GatherPprofBytes(*in, &storage);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "bomb.pb.gz");
    EXPECT_NE(std::string(e.what()).find("no field key at byte " + std::to_string(raw.size())),
              std::string::npos)
        << e.what();
  }
  EXPECT_LE(storage.size(), size_t{4} << 20);  // the first chunk of the 16 MiB of zeros
}

TEST(Pprof, SniffedFromItsStructureOnly) {
  ProfileWriter w;
  std::string proto = Basic(w);
  EXPECT_TRUE(LooksLikePprof(proto));
  EXPECT_EQ(SniffFormat(proto), InputFormat::kPprof);
  // A head cut inside a field still is one, with three whole fields before the cut.
  EXPECT_TRUE(LooksLikePprof(proto.substr(0, proto.size() - 3)));
  for (const char* text : {
           "main;work;leaf 12\n", "hello;world 5\n", "# pf-unit: nanoseconds\na;b 1\n",
           "prog 100 1.0: 250000 cpu-clock:\n\t401000 leaf+0x1 (/bin/prog)\n\n",
           "PERFILE2", "heap profile:   1:   2 [  3:  4] @ heapprofile\n", "{\"nodes\":[]}",
           "8\n", "h8h8h8", "2", "(a(a(a\n"}) {
    EXPECT_FALSE(LooksLikePprof(text)) << text;
  }
  // gperftools' CPU profile header: zero words.
  EXPECT_FALSE(LooksLikePprof(std::string(64, '\0')));
}

TEST(Pprof, RealProfilesGzippedOrNot) {
  std::string dir = std::string(PF_SOURCE_DIR) + "/tests/data/pprof/";
  std::unique_ptr<ByteSource> in = OpenInput(dir + "heap.pb.gz");
  EXPECT_EQ(SniffFormat(in->Peek()), InputFormat::kPprof);
  ReadReport report;
  StackTree tree = ReadPprof(*in, {"bytes"}, Symbolizer::Options{}, &report);
  ASSERT_EQ(tree.columns(), 4);
  EXPECT_EQ(tree.sample_type(3), (SampleType{"inuse_space", WeightUnit::kBytes}));
  std::map<std::string, uint64_t> inuse = Stacks(tree, 3);
  EXPECT_EQ(inuse["bytes:64kB;runtime.main;main.main;main.heap;main.allocLarge"], 4194304u);
  // The raw proto, from memory (not a stable mapped file: gathered chunk by chunk).
  std::string raw = test::ReadFile(dir + "allocs.pb.gz");
  std::unique_ptr<ByteSource> gz = MemoryInput(raw, "allocs.pb.gz");
  StackTree allocs = ReadPprof(*gz, {}, Symbolizer::Options{}, nullptr);
  // Its columns in the profile's order (--value's index is -sample_index's); its
  // default_sample_type, alloc_space, is the default column though not the last.
  EXPECT_EQ(allocs.sample_type(1).name, "alloc_space");
  EXPECT_EQ(allocs.default_column(), 1);
  EXPECT_EQ(allocs.FindSampleType(""), 1);
  EXPECT_EQ(OneValue(allocs).sample_type().name, "alloc_space");
}

}  // namespace
}  // namespace pf
