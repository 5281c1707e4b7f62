// Tests of pf's pprof writer: the profile.proto it writes, decoded here with protozero's
// pbf_reader field by field (sample types and units, functions, locations, mappings, samples
// leaf first, the string table, the default sample type), deterministic bytes, and the gzip
// wrapper (mtime 0, inflating to the message).
#include "formats/pprof_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <protozero/pbf_reader.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "io/input.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {
namespace {

namespace pb = pprof_schema;

/// Adds folded stack `stack` ("a;b;c") with `w` in `column`.
void Add(StackTree& tree, const std::string& stack, uint64_t w, int column = 0) {
  std::vector<StrId> ids;
  size_t start = 0;
  while (true) {
    size_t semi = stack.find(';', start);
    ids.push_back(tree.names().Intern(stack.substr(start, semi - start)));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  tree.AddStack(ids, w, column);
}

/// What a decoded profile holds, with names resolved through the string table.
struct Decoded {
  std::vector<std::pair<std::string, std::string>> sample_types;
  std::vector<std::pair<std::vector<uint64_t>, std::vector<int64_t>>> samples;
  std::map<uint64_t, std::string> mappings;                           // id -> file name
  // id -> memory start, limit, file offset and build-id (of the mappings that have them)
  std::map<uint64_t, std::tuple<uint64_t, uint64_t, uint64_t, std::string>> spans;
  std::map<uint64_t, uint64_t> addresses;  // location id -> address (where one is written)
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> locations;        // id -> (mapping, function)
  std::map<uint64_t, std::pair<std::string, std::string>> functions;  // name, system name
  std::vector<std::string> strings;
  std::string default_sample_type;
  /// Folded text "root;...;leaf v1 v2" per sample, through locations and functions.
  std::vector<std::string> Folded() const {
    std::vector<std::string> out;
    for (const auto& [locs, values] : samples) {
      std::string line;
      for (auto it = locs.rbegin(); it != locs.rend(); ++it) {
        line += (line.empty() ? "" : ";") + functions.at(locations.at(*it).second).first;
      }
      for (int64_t v : values) {
        line += ' ';
        line += std::to_string(v);
      }
      out.push_back(line);
    }
    return out;
  }
};

Decoded Decode(const std::string& bytes) {
  Decoded d;
  std::vector<std::pair<int64_t, int64_t>> types;
  std::vector<std::pair<uint64_t, int64_t>> mappings;
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, int64_t>> spans;
  std::vector<std::tuple<uint64_t, int64_t, int64_t>> functions;
  int64_t default_type = 0;
  protozero::pbf_reader p(bytes);
  while (p.next()) {
    switch (p.tag()) {
      case pb::profile::kSampleType: {
        protozero::pbf_reader v = p.get_message();
        int64_t t = 0, u = 0;
        while (v.next()) {
          if (v.tag() == pb::value_type::kType)
            t = v.get_int64();
          else if (v.tag() == pb::value_type::kUnit)
            u = v.get_int64();
          else
            v.skip();
        }
        types.emplace_back(t, u);
        break;
      }
      case pb::profile::kSample: {
        protozero::pbf_reader s = p.get_message();
        std::vector<uint64_t> locs;
        std::vector<int64_t> values;
        while (s.next()) {
          if (s.tag() == pb::sample::kLocationId) {
            auto r = s.get_packed_uint64();
            locs.assign(r.begin(), r.end());
          } else if (s.tag() == pb::sample::kValue) {
            auto r = s.get_packed_int64();
            values.assign(r.begin(), r.end());
          } else {
            s.skip();
          }
        }
        d.samples.emplace_back(locs, values);
        break;
      }
      case pb::profile::kMapping: {
        protozero::pbf_reader m = p.get_message();
        uint64_t id = 0, start = 0, limit = 0, offset = 0;
        int64_t file = 0, build_id = 0;
        bool has_functions = false;
        while (m.next()) {
          if (m.tag() == pb::mapping::kId)
            id = m.get_uint64();
          else if (m.tag() == pb::mapping::kFilename)
            file = m.get_int64();
          else if (m.tag() == pb::mapping::kHasFunctions)
            has_functions = m.get_bool();
          else if (m.tag() == pb::mapping::kMemoryStart)
            start = m.get_uint64();
          else if (m.tag() == pb::mapping::kMemoryLimit)
            limit = m.get_uint64();
          else if (m.tag() == pb::mapping::kFileOffset)
            offset = m.get_uint64();
          else if (m.tag() == pb::mapping::kBuildId)
            build_id = m.get_int64();
          else
            m.skip();
        }
        EXPECT_TRUE(has_functions);
        mappings.emplace_back(id, file);
        if (limit || build_id) spans.emplace_back(id, start, limit, offset, build_id);
        break;
      }
      case pb::profile::kLocation: {
        protozero::pbf_reader l = p.get_message();
        uint64_t id = 0, mapping = 0, function = 0;
        int lines = 0;
        while (l.next()) {
          if (l.tag() == pb::location::kId) {
            id = l.get_uint64();
          } else if (l.tag() == pb::location::kMappingId) {
            mapping = l.get_uint64();
          } else if (l.tag() == pb::location::kAddress) {
            d.addresses[id] = l.get_uint64();  // (the id comes first, in field order)
          } else if (l.tag() == pb::location::kLine) {
            ++lines;
            protozero::pbf_reader line = l.get_message();
            while (line.next()) {
              if (line.tag() == pb::line::kFunctionId)
                function = line.get_uint64();
              else
                line.skip();
            }
          } else {
            l.skip();
          }
        }
        EXPECT_EQ(lines, 1);
        d.locations[id] = {mapping, function};
        break;
      }
      case pb::profile::kFunction: {
        protozero::pbf_reader f = p.get_message();
        uint64_t id = 0;
        int64_t name = 0, system = 0;
        while (f.next()) {
          if (f.tag() == pb::function::kId)
            id = f.get_uint64();
          else if (f.tag() == pb::function::kName)
            name = f.get_int64();
          else if (f.tag() == pb::function::kSystemName)
            system = f.get_int64();
          else
            f.skip();
        }
        functions.emplace_back(id, name, system);
        break;
      }
      case pb::profile::kStringTable:
        d.strings.push_back(p.get_string());
        break;
      case pb::profile::kDefaultSampleType:
        default_type = p.get_int64();
        break;
      default:
        ADD_FAILURE() << "unexpected field " << p.tag();
        p.skip();
    }
  }
  EXPECT_FALSE(d.strings.empty());
  EXPECT_EQ(d.strings[0], "");
  auto str = [&](int64_t i) { return d.strings.at(static_cast<size_t>(i)); };
  for (auto [t, u] : types) d.sample_types.emplace_back(str(t), str(u));
  for (auto [id, file] : mappings) d.mappings[id] = str(file);
  for (auto [id, start, limit, offset, build_id] : spans) {
    d.spans[id] = {start, limit, offset, str(build_id)};
  }
  for (auto [id, name, system] : functions) d.functions[id] = {str(name), str(system)};
  d.default_sample_type = str(default_type);
  return d;
}

TEST(PprofWriter, WritesStacksLeafFirstWithFunctionsAndLocations) {
  StackTree tree(SampleType{"cpu", WeightUnit::kNanoseconds});
  Add(tree, "prog;main;work", 30);
  Add(tree, "prog;main;[unknown]", 5);
  Add(tree, "prog;main;libc.so.6`memcpy", 7);
  Add(tree, "prog;main;work;work", 2);
  Add(tree, "prog;main", 1);
  Decoded d = Decode(EncodePprof(tree));
  ASSERT_EQ(d.sample_types.size(), 1u);
  EXPECT_EQ(d.sample_types[0], std::make_pair(std::string("cpu"), std::string("nanoseconds")));
  EXPECT_EQ(d.default_sample_type, "cpu");
  // One function and one location per distinct name, numbered bytewise.
  std::vector<std::string> names;
  for (const auto& [id, f] : d.functions) {
    EXPECT_EQ(f.second, "");  // no system name: pprof would shorten C++ names
    names.push_back(f.first);
    EXPECT_EQ(d.locations.at(id).second, id);
    EXPECT_EQ(d.locations.at(id).first, 0u);  // no module noted: no mapping
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"[unknown]", "libc.so.6`memcpy", "main", "prog", "work"}));
  EXPECT_TRUE(d.mappings.empty());
  // Samples in folded order; names kept as pf shows them.
  EXPECT_EQ(d.Folded(), (std::vector<std::string>{"prog;main 1", "prog;main;[unknown] 5",
                                                  "prog;main;libc.so.6`memcpy 7",
                                                  "prog;main;work 30", "prog;main;work;work 2"}));
  // Leaf first.
  EXPECT_EQ(d.functions.at(d.samples.back().first.front()).first, "work");
}

TEST(PprofWriter, WritesEverySampleTypeWithPprofUnits) {
  StackTree tree(std::vector<SampleType>{{"alloc_objects", WeightUnit::kObjects},
                                         {"alloc_space", WeightUnit::kBytes},
                                         {"samples", WeightUnit::kSamples},
                                         {"events", WeightUnit::kEvents}});
  Add(tree, "main;alloc", 3, 0);
  Add(tree, "main;alloc", 4096, 1);
  Add(tree, "main;free", 1, 2);
  Add(tree, "main;free", 9, 3);
  Decoded d = Decode(EncodePprof(tree));
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(d.sample_types, (std::vector<P>{{"alloc_objects", "count"},
                                            {"alloc_space", "bytes"},
                                            {"samples", "count"},
                                            {"events", "count"}}));
  EXPECT_EQ(d.default_sample_type, "events");  // the last, pprof's and pf's default
  EXPECT_EQ(d.Folded(), (std::vector<std::string>{"main;alloc 3 4096 0 0", "main;free 0 0 1 9"}));
}

TEST(PprofWriter, WritesAMappingPerModule) {
  StackTree tree;
  Add(tree, "prog;main;memcpy", 2);
  Add(tree, "prog;main;work", 3);
  tree.NoteModule(tree.names().Intern("memcpy"), tree.names().Intern("libc.so.6"));
  tree.NoteModule(tree.names().Intern("main"), tree.names().Intern("prog"));
  tree.NoteModule(tree.names().Intern("work"), tree.names().Intern("prog"));
  Decoded d = Decode(EncodePprof(tree));
  // The main binary (named as the heaviest root frame) first, then by name.
  EXPECT_EQ(d.mappings, (std::map<uint64_t, std::string>{{1, "prog"}, {2, "libc.so.6"}}));
  for (const auto& [id, f] : d.functions) {
    uint64_t want = f.first == "memcpy" ? 2 : f.first == "prog" ? 0 : 1;
    EXPECT_EQ(d.locations.at(id).first, want) << f.first;
  }
}

// A recording's frames note where their functions start and their modules' build-ids: the
// locations get those addresses, the mappings the pages that hold them (a binary's as file
// offsets, the kernel's as addresses) and the build-ids.
TEST(PprofWriter, WritesAddressesAndBuildIdsNotedForFunctions) {
  StackTree tree;
  Add(tree, "prog;main;work;sys_read", 2);
  Add(tree, "prog;main;memcpy", 3);
  Add(tree, "prog;main;[unknown]", 1);
  auto id = [&](const char* s) { return tree.names().Intern(s); };
  tree.NoteModule(id("main"), id("prog"));
  tree.NoteModule(id("work"), id("prog"));
  tree.NoteModule(id("memcpy"), id("libc.so.6"));
  tree.NoteModule(id("sys_read"), id("[kernel.kallsyms]"));
  tree.NoteAddress(id("main"), 0x1130);
  tree.NoteAddress(id("work"), 0x2210);
  tree.NoteAddress(id("work"), 0x2200);  // the lower stays
  tree.NoteAddress(id("memcpy"), 0x9a000);
  tree.NoteAddress(id("sys_read"), 0xffffffff81234560);
  tree.NoteBuildId(id("prog"), id("57d46a9e"));
  tree.NoteBuildId(id("libc.so.6"), id("93ac61ec"));
  tree.NoteBuildId(id("libc.so.6"), id("0badc0de"));  // two libcs: none
  Decoded d = Decode(EncodePprof(tree));
  ASSERT_EQ(d.mappings, (std::map<uint64_t, std::string>{
                            {1, "prog"}, {2, "[kernel.kallsyms]"}, {3, "libc.so.6"}}));
  using Span = std::tuple<uint64_t, uint64_t, uint64_t, std::string>;
  EXPECT_EQ(d.spans.at(1), (Span{0x1000, 0x3000, 0x1000, "57d46a9e"}));
  EXPECT_EQ(d.spans.at(2), (Span{0xffffffff81234000, 0xffffffff81235000, 0, ""}));
  EXPECT_EQ(d.spans.at(3), (Span{0x9a000, 0x9b000, 0x9a000, ""}));
  std::map<std::string, uint64_t> address_of;
  for (const auto& [loc, address] : d.addresses) {
    address_of[d.functions.at(d.locations.at(loc).second).first] = address;
  }
  EXPECT_EQ(address_of, (std::map<std::string, uint64_t>{{"main", 0x1130},
                                                          {"memcpy", 0x9a000},
                                                          {"sys_read", 0xffffffff81234560},
                                                          {"work", 0x2200}}));
  // Noted in another tree, merged: the same.
  StackTree merged;
  merged.Merge(tree);
  EXPECT_EQ(EncodePprof(merged), EncodePprof(tree));
  EXPECT_EQ(EncodePprof(OneValue(tree)), EncodePprof(tree));
}

TEST(PprofWriter, SameProfileSameBytesWhateverTheOrderOfInsertion) {
  StackTree a, b;
  Add(a, "x;y;z", 1);
  Add(a, "x;q", 2);
  Add(a, "r", 3);
  Add(b, "r", 3);
  Add(b, "x;q", 2);
  Add(b, "x;y;z", 1);
  b.names().Intern("unused");
  EXPECT_EQ(EncodePprof(a), EncodePprof(b));
  StringSink ga, gb;
  WritePprof(a, ga);
  WritePprof(b, gb);
  EXPECT_EQ(ga.data(), gb.data());
}

TEST(PprofWriter, GzipsWithMtimeZero) {
  StackTree tree;
  Add(tree, "a;b", 1);
  StringSink sink;
  WritePprof(tree, sink);
  const std::string& gz = sink.data();
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0'));  // MTIME
  std::unique_ptr<ByteSource> in = MemoryInput(gz);
  std::string inflated;
  for (std::string_view chunk = in->Next(); !chunk.empty(); chunk = in->Next()) {
    inflated.append(chunk);
  }
  EXPECT_EQ(inflated, EncodePprof(tree));
  StringSink plain;  // -o NAME.pb
  WritePprof(tree, plain, false);
  EXPECT_EQ(plain.data(), EncodePprof(tree));
}

TEST(PprofWriter, EmptyTreeIsAValidProfile) {
  StackTree tree;
  Decoded d = Decode(EncodePprof(tree));
  EXPECT_EQ(d.sample_types.size(), 1u);
  EXPECT_TRUE(d.samples.empty());
  EXPECT_TRUE(d.functions.empty());
}

TEST(PprofWriter, RefusesDecimalsAndDifferentialTrees) {
  StackTree decimals;
  Add(decimals, "a", 15);
  decimals.SetDecimals(1);
  EXPECT_THROW(EncodePprof(decimals), Error);
  StackTree diff = StackTree::Differential();
  Add(diff, "a", 1, 0);
  EXPECT_THROW(EncodePprof(diff), Error);
}

TEST(PprofWriter, SaturatedWeightsStayTheLargestValue) {
  StackTree tree;
  Add(tree, "a", UINT64_MAX);
  Decoded d = Decode(EncodePprof(tree));
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_EQ(d.samples[0].second, std::vector<int64_t>{INT64_MAX});
}

}  // namespace
}  // namespace pf
