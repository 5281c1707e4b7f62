// Decoding pprof's profile.proto (formats/pprof.h) with protozero.
//
// The message is read in two passes: the first walks Profile's top-level fields once,
// keeping the views of the repeated sub-messages (samples, locations, functions, mappings)
// and the string table, because a producer may write them in any order (Go writes the
// samples first and the strings last); the second decodes each kind in dependency order
// (strings, then functions and mappings, then locations, then samples) and turns every id
// into an index, so the tree builder after it follows plain indexes. Ids are usually dense
// (1..N): they are looked up in a vector then, in a hash map otherwise.
//
// Every getter is called only after its field's wire type is checked (protozero asserts the
// wire type, and a release build would read garbage), and protozero's own exceptions
// (truncated buffer, varint too long, bad tag) become pf::Error naming the input.

#include "formats/pprof.h"

#include <protozero/pbf_reader.hpp>

#include <algorithm>
#include <unordered_map>

#include "base/error.h"
#include "formats/pprof_schema.h"

namespace pf {

namespace {

using protozero::pbf_reader;
using protozero::pbf_wire_type;

namespace pb = pprof_schema;
using namespace pprof_schema::profile;  // Profile's fields, the ones most used

// The wire type Profile's field `tag` has, or -1 for a field Profile does not have.
int ProfileWireType(uint32_t tag) {
  switch (tag) {
    case kSampleType: case kSample: case kMapping: case kLocation: case kFunction:
    case kStringTable: case kPeriodType: case kDocUrl:
      return static_cast<int>(pbf_wire_type::length_delimited);
    case kDropFrames: case kKeepFrames: case kTimeNanos: case kDurationNanos: case kPeriod:
    case kComment: case kDefaultSampleType:
      return static_cast<int>(pbf_wire_type::varint);
    default:
      return -1;
  }
}

// Steps to the next field of `m`, a reader over `buffer`, as m.next() does, and refuses a
// length-delimited one longer than what is left: protozero keeps the low 32 bits of a
// length, so a lying 2^40 would read as 0 (and 2^32 + 5 as 5), the rest misread.
bool NextField(pbf_reader& m, std::string_view buffer) {
  if (!m.next()) return false;
  if (m.wire_type() == pbf_wire_type::length_delimited) {
    const char* end = buffer.data() + buffer.size();
    const char* at = end - m.length();
    const uint64_t length = protozero::decode_varint(&at, end);
    if (length > static_cast<uint64_t>(end - at)) throw protozero::end_of_buffer_exception();
  }
  return true;
}

class Decoder {
 public:
  Decoder(std::string_view data, const std::string& name) : data_(data), name_(name) {}

  PprofProfile Run() {
    if (data_.size() > kMaxPprofBytes) ThrowPprofTooLarge(name_);
    try {
      Collect();
      Functions();
      Mappings();
      Locations();
      Samples();
      p_.default_sample_type = String(default_sample_type_);
      p_.drop_frames = String(drop_frames_);
      p_.keep_frames = String(keep_frames_);
    } catch (const protozero::exception& e) {
      throw Error(name_, std::string("not a valid pprof profile.proto: ") + e.what() +
                             " (truncated or corrupt file?)");
    }
    return std::move(p_);
  }

 private:
  [[noreturn]] void Bad(const std::string& what) const {
    throw Error(name_, "not a valid pprof profile.proto: " + what);
  }

  // Checks the current field's wire type before a getter reads it.
  void Expect(const pbf_reader& m, pbf_wire_type type, const char* what) const {
    if (m.wire_type() != type) Bad(std::string(what) + " has the wrong wire type");
  }
  uint64_t U64(pbf_reader& m, const char* what) const {
    Expect(m, pbf_wire_type::varint, what);
    return m.get_uint64();
  }
  int64_t I64(pbf_reader& m, const char* what) const {
    Expect(m, pbf_wire_type::varint, what);
    return m.get_int64();
  }
  std::string_view View(pbf_reader& m, const char* what) const {
    Expect(m, pbf_wire_type::length_delimited, what);
    protozero::data_view v = m.get_view();
    return {v.data(), v.size()};
  }
  // A repeated scalar, packed (length-delimited) or not (one varint per field).
  template <typename T, typename F>
  void Repeated(pbf_reader& m, const char* what, F&& each) const {
    if (m.wire_type() == pbf_wire_type::length_delimited) {
      if constexpr (std::is_signed_v<T>) {
        for (int64_t v : m.get_packed_int64()) each(v);
      } else {
        for (uint64_t v : m.get_packed_uint64()) each(v);
      }
    } else if constexpr (std::is_signed_v<T>) {
      each(I64(m, what));
    } else {
      each(U64(m, what));
    }
  }

  std::string_view String(int64_t index) const {
    if (index == 0 && p_.strings.empty()) return {};
    if (index < 0 || static_cast<uint64_t>(index) >= p_.strings.size()) {
      Bad("string index " + std::to_string(index) + " outside the string table (" +
          std::to_string(p_.strings.size()) + " strings)");
    }
    return p_.strings[index];
  }

  // Pass 1: the top-level fields.
  void Collect() {
    pbf_reader m(data_.data(), data_.size());
    while (NextField(m, data_)) {
      uint32_t tag = m.tag();
      int type = ProfileWireType(tag);
      if (type < 0) {
        m.skip();  // a field of a later profile.proto
        continue;
      }
      const char* what = "a Profile field";
      if (tag == kComment && m.wire_type() == pbf_wire_type::length_delimited) {
        m.skip();  // packed comments
        continue;
      }
      Expect(m, static_cast<pbf_wire_type>(type), what);
      switch (tag) {
        case kSampleType: sample_type_views_.push_back(View(m, what)); break;
        case kSample: sample_views_.push_back(View(m, what)); break;
        case kMapping: mapping_views_.push_back(View(m, what)); break;
        case kLocation: location_views_.push_back(View(m, what)); break;
        case kFunction: function_views_.push_back(View(m, what)); break;
        case kStringTable: p_.strings.push_back(View(m, what)); break;
        case kPeriodType: period_type_view_ = View(m, what); break;
        case kPeriod: p_.period = m.get_int64(); break;
        case kDefaultSampleType: default_sample_type_ = m.get_int64(); break;
        case kDropFrames: drop_frames_ = m.get_int64(); break;
        case kKeepFrames: keep_frames_ = m.get_int64(); break;
        default: m.skip(); break;
      }
    }
    if (!p_.strings.empty() && !p_.strings[0].empty()) {
      Bad("the string table's first string is not empty");
    }
    for (std::string_view v : sample_type_views_) p_.sample_types.push_back(ValueType(v));
    if (!period_type_view_.empty()) p_.period_type = ValueType(period_type_view_);
  }

  PprofProfile::ValueType ValueType(std::string_view v) const {
    pbf_reader m(v.data(), v.size());
    int64_t type = 0, unit = 0;
    while (NextField(m, v)) {
      if (m.tag() == pb::value_type::kType) type = I64(m, "ValueType.type");
      else if (m.tag() == pb::value_type::kUnit) unit = I64(m, "ValueType.unit");
      else m.skip();
    }
    return {String(type), String(unit)};
  }

  // Id -> index, for ids a later message names.
  class IdIndex {
   public:
    void Reserve(size_t n) { limit_ = 4 * n + 1024; }
    // False when the id is there already.
    bool Add(uint64_t id, uint32_t index) {
      if (id < limit_) {
        if (dense_.size() <= id) dense_.resize(std::max<size_t>(id + 1, dense_.size() * 2), kNo);
        if (dense_[id] != kNo) return false;
        dense_[id] = index;
        return true;
      }
      return sparse_.emplace(id, index).second;
    }
    uint32_t Find(uint64_t id) const {
      if (id < dense_.size()) return dense_[id];
      auto it = sparse_.find(id);
      return it == sparse_.end() ? kNo : it->second;
    }
    static constexpr uint32_t kNo = PprofProfile::kNone;

   private:
    uint64_t limit_ = 1024;
    std::vector<uint32_t> dense_;
    std::unordered_map<uint64_t, uint32_t> sparse_;
  };

  void Functions() {
    functions_.Reserve(function_views_.size());
    p_.functions.reserve(function_views_.size());
    for (std::string_view v : function_views_) {
      pbf_reader m(v.data(), v.size());
      PprofProfile::Function f;
      while (NextField(m, v)) {
        switch (m.tag()) {
          case pb::function::kId: f.id = U64(m, "Function.id"); break;
          case pb::function::kName: f.name = String(I64(m, "Function.name")); break;
          case pb::function::kSystemName: f.system_name = String(I64(m, "Function.system_name")); break;
          case pb::function::kFilename: f.filename = String(I64(m, "Function.filename")); break;
          default: m.skip(); break;
        }
      }
      if (f.id == 0) Bad("a function with id 0");
      if (!functions_.Add(f.id, static_cast<uint32_t>(p_.functions.size()))) {
        Bad("two functions with id " + std::to_string(f.id));
      }
      p_.functions.push_back(f);
    }
  }

  void Mappings() {
    mappings_.Reserve(mapping_views_.size());
    p_.mappings.reserve(mapping_views_.size());
    for (std::string_view v : mapping_views_) {
      pbf_reader m(v.data(), v.size());
      PprofProfile::Mapping map;
      while (NextField(m, v)) {
        switch (m.tag()) {
          case pb::mapping::kId: map.id = U64(m, "Mapping.id"); break;
          case pb::mapping::kMemoryStart: map.memory_start = U64(m, "Mapping.memory_start"); break;
          case pb::mapping::kMemoryLimit: map.memory_limit = U64(m, "Mapping.memory_limit"); break;
          case pb::mapping::kFileOffset: map.file_offset = U64(m, "Mapping.file_offset"); break;
          case pb::mapping::kFilename: map.filename = String(I64(m, "Mapping.filename")); break;
          case pb::mapping::kBuildId: map.build_id = String(I64(m, "Mapping.build_id")); break;
          default: m.skip(); break;
        }
      }
      if (map.id == 0) Bad("a mapping with id 0");
      if (!mappings_.Add(map.id, static_cast<uint32_t>(p_.mappings.size()))) {
        Bad("two mappings with id " + std::to_string(map.id));
      }
      p_.mappings.push_back(map);
    }
  }

  void Locations() {
    locations_.Reserve(location_views_.size());
    p_.locations.reserve(location_views_.size());
    for (std::string_view v : location_views_) {
      pbf_reader m(v.data(), v.size());
      PprofProfile::Location loc;
      loc.first_line = static_cast<uint32_t>(p_.lines.size());
      uint64_t mapping_id = 0;
      while (NextField(m, v)) {
        switch (m.tag()) {
          case pb::location::kId: loc.id = U64(m, "Location.id"); break;
          case pb::location::kMappingId: mapping_id = U64(m, "Location.mapping_id"); break;
          case pb::location::kAddress: loc.address = U64(m, "Location.address"); break;
          case pb::location::kLine: p_.lines.push_back(Line(View(m, "Location.line"), loc.id)); break;
          default: m.skip(); break;
        }
      }
      if (loc.id == 0) Bad("a location with id 0");
      loc.lines = static_cast<uint32_t>(p_.lines.size()) - loc.first_line;
      if (mapping_id != 0) {
        loc.mapping = mappings_.Find(mapping_id);
        if (loc.mapping == IdIndex::kNo) {
          Bad("location " + std::to_string(loc.id) + " names mapping " +
              std::to_string(mapping_id) + ", which the profile does not have");
        }
      }
      if (!locations_.Add(loc.id, static_cast<uint32_t>(p_.locations.size()))) {
        Bad("two locations with id " + std::to_string(loc.id));
      }
      p_.locations.push_back(loc);
    }
  }

  PprofProfile::Line Line(std::string_view v, uint64_t location_id) const {
    pbf_reader m(v.data(), v.size());
    PprofProfile::Line line;
    uint64_t function_id = 0;
    while (NextField(m, v)) {
      if (m.tag() == pb::line::kFunctionId) function_id = U64(m, "Line.function_id");
      else if (m.tag() == pb::line::kLine) line.line = I64(m, "Line.line");
      else m.skip();
    }
    if (function_id != 0) {
      line.function = functions_.Find(function_id);
      if (line.function == IdIndex::kNo) {
        Bad("a line of location " + std::to_string(location_id) + " names function " +
            std::to_string(function_id) + ", which the profile does not have");
      }
    }
    return line;
  }

  void Samples() {
    const size_t types = p_.sample_types.size();
    p_.samples.reserve(sample_views_.size());
    // Every location id and value takes a byte at least: the samples' bytes bound them, so
    // they are not copied as they grow (pages reserved past the last are never touched;
    // past 2^26 they grow as they come).
    size_t bytes = 0;
    for (std::string_view v : sample_views_) bytes += v.size();
    p_.location_ids.reserve(std::min<size_t>(bytes, size_t{1} << 26));
    p_.values.reserve(std::min<size_t>({bytes, sample_views_.size() * types, size_t{1} << 26}));
    for (std::string_view v : sample_views_) {
      pbf_reader m(v.data(), v.size());
      PprofProfile::Sample s;
      s.first_location = static_cast<uint32_t>(p_.location_ids.size());
      s.first_value = static_cast<uint32_t>(p_.values.size());
      s.first_label = static_cast<uint32_t>(p_.labels.size());
      while (NextField(m, v)) {
        switch (m.tag()) {
          case pb::sample::kLocationId:
            Repeated<uint64_t>(m, "Sample.location_id", [&](uint64_t id) {
              uint32_t index = locations_.Find(id);
              if (index == IdIndex::kNo) {
                Bad("sample " + std::to_string(p_.samples.size() + 1) + " names location " +
                    std::to_string(id) + ", which the profile does not have");
              }
              p_.location_ids.push_back(index);
            });
            break;
          case pb::sample::kValue:
            Repeated<int64_t>(m, "Sample.value", [&](int64_t x) { p_.values.push_back(x); });
            break;
          case pb::sample::kLabel: Label(View(m, "Sample.label")); break;
          default: m.skip(); break;
        }
      }
      s.locations = static_cast<uint32_t>(p_.location_ids.size()) - s.first_location;
      s.labels = static_cast<uint32_t>(p_.labels.size()) - s.first_label;
      if (p_.values.size() - s.first_value != types) {
        Bad("sample " + std::to_string(p_.samples.size() + 1) + " has " +
            std::to_string(p_.values.size() - s.first_value) + " values for " +
            std::to_string(types) + " sample types");
      }
      if (p_.location_ids.size() > UINT32_MAX || p_.values.size() > UINT32_MAX) {
        Bad("more than 2^32 locations or values in samples");
      }
      p_.samples.push_back(s);
    }
  }

  void Label(std::string_view v) {
    pbf_reader m(v.data(), v.size());
    int64_t key = 0, str = 0, num_unit = 0;
    PprofProfile::Label l;
    while (NextField(m, v)) {
      switch (m.tag()) {
        case pb::label::kKey: key = I64(m, "Label.key"); break;
        case pb::label::kStr: str = I64(m, "Label.str"); break;
        case pb::label::kNum: l.num = I64(m, "Label.num"); break;
        case pb::label::kNumUnit: num_unit = I64(m, "Label.num_unit"); break;
        default: m.skip(); break;
      }
    }
    l.key = String(key);
    l.str = String(str);
    l.num_unit = String(num_unit);
    // As pprof: a label with a string is a string label, else numeric when it has a number
    // or a unit; one with neither is dropped.
    if (str == 0) {
      if (l.num == 0 && num_unit == 0) return;
      l.numeric = true;
    }
    p_.labels.push_back(l);
  }

  std::string_view data_;
  const std::string& name_;
  PprofProfile p_;
  std::vector<std::string_view> sample_type_views_, sample_views_, mapping_views_,
      location_views_, function_views_;
  std::string_view period_type_view_;
  int64_t default_sample_type_ = 0, drop_frames_ = 0, keep_frames_ = 0;
  IdIndex functions_, mappings_, locations_;
};

// Whether `v` (a whole sub-message) has only fields of the given wire types: `types[tag]`,
// 'v' varint, 'l' length-delimited, 'p' packed or varint; tags beyond are rejected.
bool SubMessageFits(std::string_view v, std::string_view types) {
  pbf_reader m(v.data(), v.size());
  while (NextField(m, v)) {
    uint32_t tag = m.tag();
    char want = tag < types.size() ? types[tag] : '-';
    pbf_wire_type w = m.wire_type();
    bool ok = (want == 'v' && w == pbf_wire_type::varint) ||
              (want == 'l' && w == pbf_wire_type::length_delimited) ||
              (want == 'p' && (w == pbf_wire_type::varint ||
                               w == pbf_wire_type::length_delimited));
    if (!ok) return false;
    m.skip();
  }
  return true;
}

}  // namespace

void ThrowPprofTooLarge(const std::string& name, uint64_t cap) {
  std::string size = cap % (uint64_t{1} << 30) == 0 ? std::to_string(cap >> 30) + " GiB"
                                                      : std::to_string(cap) + " bytes";
  throw Error(name, "pprof profile larger than " + size +
                        " once decompressed: pf reads no more (protobuf messages cannot be "
                        "larger; a gzip bomb?)");
}

PprofProfile DecodePprof(std::string_view data, const std::string& name) {
  return Decoder(data, name).Run();
}

bool LooksLikePprof(std::string_view head) {
  // Sub-messages' field types by tag (index 0 unused), profile.proto.
  static constexpr std::string_view kSubTypes[] = {
      "",
      "-vv",          // 1 ValueType: type, unit
      "-ppl",         // 2 Sample: location_id, value, label
      "-vvvvvvvvvv",  // 3 Mapping: id, start, limit, offset, filename, build_id, has_*
      "-vvvlv",       // 4 Location: id, mapping_id, address, line, is_folded
      "-vvvvv",       // 5 Function: id, name, system_name, filename, start_line
  };
  if (head.empty()) return false;
  size_t whole_fields = 0, messages = 0;
  bool cut = false, strings = false;
  try {
    pbf_reader m(head.data(), head.size());
    while (true) {
      bool more;
      try {
        more = m.next();
      } catch (const protozero::end_of_buffer_exception&) {
        cut = true;
        break;
      }
      if (!more) break;
      uint32_t tag = m.tag();
      int type = ProfileWireType(tag);
      bool packed_comment =
          tag == kComment && m.wire_type() == pbf_wire_type::length_delimited;
      if (type < 0 || (static_cast<int>(m.wire_type()) != type && !packed_comment)) return false;
      if (m.wire_type() == pbf_wire_type::length_delimited) {
        protozero::data_view v;
        try {
          v = m.get_view();
        } catch (const protozero::end_of_buffer_exception&) {
          cut = true;  // a field the head holds only the start of
          break;
        }
        strings = strings || tag == kStringTable;
        messages += tag != kDocUrl && tag != kComment;
        if (tag >= kSampleType && tag <= kFunction &&
            !SubMessageFits({v.data(), v.size()}, kSubTypes[tag])) {
          return false;
        }
        if (tag == kPeriodType && !SubMessageFits({v.data(), v.size()}, kSubTypes[1])) {
          return false;
        }
      } else {
        try {
          m.skip();
        } catch (const protozero::end_of_buffer_exception&) {
          cut = true;
          break;
        }
      }
      ++whole_fields;
    }
  } catch (const protozero::exception&) {
    return false;
  }
  // The whole input parsed (every producer writes a string table, whose first string is
  // ""), or enough of it: three whole fields, one of them a sub-message or string.
  return cut ? whole_fields >= 3 && messages >= 1 : strings;
}

}  // namespace pf
