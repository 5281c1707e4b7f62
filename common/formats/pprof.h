#pragma once
// pprof's profile.proto (github.com/google/pprof/proto/profile.proto), decoded.
//
// A profile is a table of samples (each a leaf-first list of location ids, one value per
// sample type, labels), locations (an address in a mapping and, once symbolized, the
// functions at it, innermost inlined function first), functions, mappings and one string
// table that every name indexes. DecodePprof reads the whole message with protozero
// (header-only, zero-copy): strings stay views into the input, which the caller keeps alive.
// It checks what the readers after it rely on (every id a sample or a location names exists,
// every string index is inside the table, every sample has one value per sample type) and
// throws pf::Error naming the input for what pprof itself would refuse. LooksLikePprof is
// the sniffer's strict structural test.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

/// The most bytes of (decompressed) profile.proto pf reads: protobuf messages are limited to
/// 2 GiB, and a gzip bomb must end with an error, not with the machine's memory.
constexpr uint64_t kMaxPprofBytes = uint64_t{2} << 30;
/// Throws the pf::Error for an input `name` larger than `cap` bytes (kMaxPprofBytes).
[[noreturn]] void ThrowPprofTooLarge(const std::string& name, uint64_t cap = kMaxPprofBytes);

struct PprofProfile {
  struct ValueType {
    std::string_view type, unit;
  };
  struct Label {
    std::string_view key, str;  // str empty for a numeric label
    int64_t num = 0;
    std::string_view num_unit;
    bool numeric = false;
  };
  struct Sample {
    uint32_t first_location = 0, locations = 0;  // into location_ids (leaf first)
    uint32_t first_value = 0;                    // into values (sample_types.size() of them)
    uint32_t first_label = 0, labels = 0;        // into labels
  };
  struct Line {
    uint32_t function = UINT32_MAX;  // index into functions, or kNone
    int64_t line = 0;
  };
  struct Location {
    uint64_t id = 0;
    uint32_t mapping = UINT32_MAX;  // index into mappings, or kNone
    uint64_t address = 0;
    uint32_t first_line = 0, lines = 0;  // into lines, innermost first
  };
  struct Function {
    uint64_t id = 0;
    std::string_view name, system_name, filename;
  };
  struct Mapping {
    uint64_t id = 0;
    uint64_t memory_start = 0, memory_limit = 0, file_offset = 0;
    std::string_view filename, build_id;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  std::vector<ValueType> sample_types;
  std::vector<Sample> samples;
  std::vector<uint32_t> location_ids;  // samples' locations, as indexes into `locations`
  std::vector<int64_t> values;
  std::vector<Label> labels;
  std::vector<Location> locations;
  std::vector<Line> lines;
  std::vector<Function> functions;
  std::vector<Mapping> mappings;
  std::vector<std::string_view> strings;
  std::string_view default_sample_type;  // "" when not set
  std::string_view drop_frames, keep_frames;  // regular expressions; "" when not set
  ValueType period_type;
  int64_t period = 0;
};

/// Decodes `data` (an uncompressed profile.proto message, kept alive by the caller). `name`
/// is the input's name for errors. Throws pf::Error for a message pprof would refuse:
/// truncated or malformed protobuf, an index outside the string table, an id that names
/// nothing, a sample whose values do not match the sample types.
PprofProfile DecodePprof(std::string_view data, const std::string& name);

/// Whether `head` (an input's first bytes, perhaps not all of it) is a profile.proto message:
/// every field it holds is one of Profile's with the wire type the schema gives it, every
/// sub-message whole in `head` parses as its type's, and there is enough of it (the whole
/// input, or at least three whole fields) that text and other binaries never pass.
bool LooksLikePprof(std::string_view head);

}  // namespace pf
