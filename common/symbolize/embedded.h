#pragma once
// Symbols carried inside a recording, so it names its addresses on a machine without the
// recorded binaries (or with another kernel). pf-record resolves every address it sampled
// where it records and appends the symbols that contain them: per binary (path and
// build-id) the symbols as file-offset ranges, and the kernel symbols hit. They travel as
// PERF_RECORD_KSYMBOL records that perf treats as no-ops: unregistrations of addresses no
// kernel map holds (file offsets; kernel addresses with their top bit cleared), their names
// prefixed "pf-dso ", "pf-sym " or "pf-ksym " (ToNotes/AddNote; man/pf-stream.5). Names are
// stored as displayed (demangled). A compact encoding (Encode/Decode) serves tests and tools.
//
// Layout (little-endian; strings are u32 length + bytes):
//   u32 magic "PFSY", u32 version (1), u32 number of binaries,
//     each: string path, string build-id (hex), u32 count, count x {u64 start, u64 size,
//     string name}
//   u32 number of kernel symbols, each: {u64 start, u64 size, string name, string module}

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

struct EmbeddedSymbols {
  struct Range {
    uint64_t size;
    std::string name;
    std::string module;  // kernel symbols only
  };
  struct Binary {
    std::string build_id;
    std::map<uint64_t, Range> symbols;  // by start (file offset)
  };
  std::map<std::string, Binary> binaries;  // by path
  std::map<uint64_t, Range> kernel;        // by address
  std::map<uint64_t, std::string> note_dsos;  // AddNote's binaries by index

  bool empty() const { return binaries.empty() && kernel.empty(); }

  /// Records that [start, start + size) of `path` is `name` (widening a known range).
  void Add(const std::string& path, const std::string& build_id, uint64_t start, uint64_t size,
           std::string_view name);
  void AddKernel(uint64_t start, uint64_t size, std::string_view name, std::string_view module);

  /// The symbol holding `offset` in `path`; null when none does.
  const Range* Find(const std::string& path, uint64_t offset, uint64_t* start) const;
  const Range* FindKernel(uint64_t ip, uint64_t* start) const;

  /// One KSYMBOL note: address, length and name, as pf-record writes them.
  struct Note {
    uint64_t addr;
    uint32_t len;
    std::string name;
  };
  std::vector<Note> ToNotes() const;
  /// Takes one note (in the order ToNotes gives them); false when it is not one of pf's.
  bool AddNote(uint64_t addr, uint32_t len, std::string_view name);

  std::string Encode() const;
  /// Decodes what Encode wrote; false (and nothing added) when it is malformed.
  bool Decode(std::span<const uint8_t> data);
};

}  // namespace pf
