#pragma once
// Naming a sample's frames as perf script names them (a part of the Session, session.h): an
// address is resolved to its map, then to (dso, file offset), then to a symbol through the
// Symbolizer; for a user frame unwound from a stack copy, the functions inlined there come
// before it (from DWARF), and with source lines each frame gets its line. Each frame named is
// kept once in a table and handed out as its FrameId. A user frame is resolved once per
// (binary, file offset) where its name depends on nothing else (no inline frames, no source
// lines: a frame-pointer recording's), for all processes alike; else once per (process, map,
// address). Callers fold by address first where they can.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/flat_map.h"
#include "base/intern.h"
#include "base/typed_id.h"
#include "pfstream/binary_tables.h"
#include "pfstream/perf_data.h"
#include "pfstream/process_maps.h"
#include "symbolize/symbolizer.h"

namespace pf {

/// A frame as perf script prints it: the address column, the symbol (and offset) and dso.
struct ResolvedFrame {
  uint64_t addr = 0;     // what perf prints: the map-relative address, or the ip
  std::string_view sym;  // "[unknown]" when there is none
  uint64_t symoff = 0;
  bool has_sym = false;
  std::string_view dso;  // "[unknown]" when no map holds the address
  std::string_view build_id;  // the dso's, in hex, when the recording gives it
  bool kernel = false;
  bool inlined = false;      // a function inlined at this address: printed "(inlined)"
  std::string_view srcline;  // "file.c:12" (with SetSrcline), or "" when none is printed
};

/// A frame named by a FrameNamer: its place in the namer's table (FrameNamer::Frame).
using FrameId = TypedId<struct FrameIdTag, uint32_t>;
/// What a frame prints but its address and offset, numbered (FrameNamer::NameIdOf).
using NameId = TypedId<struct NameIdTag, uint32_t>;

class FrameNamer {
 public:
  FrameNamer(ProcessMaps& maps, BinaryTables& tables, Symbolizer& symbolizer);
  ~FrameNamer();
  FrameNamer(const FrameNamer&) = delete;
  FrameNamer& operator=(const FrameNamer&) = delete;

  /// Inline frames before each user frame unwound from a stack copy; on by default. (Set
  /// it and SetSrcline before the first frame is named.)
  void SetInline(bool on) { inline_ = on; }
  /// A source line for each frame, as perf script -F +srcline prints it.
  void SetSrcline(bool on) { srcline_ = on; }

  /// Resolves `ip` as seen by process `pid` in kernel or user mode (and gives its map).
  ResolvedFrame Resolve(uint32_t pid, uint64_t ip, bool kernel, MapEntry** map = nullptr) {
    if (map) *map = nullptr;
    return kernel ? Frame(KernelFrame(ip, false)) : ResolveUser(pid, ip, map);
  }
  /// The frames of user address `ip` of process `pid`, appended to `out`: the functions
  /// inlined there (innermost first, with SetInline), then the frame itself. For profiles
  /// whose stacks are addresses alone (gperftools).
  void UserFrames(uint32_t pid, uint64_t ip, std::vector<ResolvedFrame>* out);
  /// The frames of a sample for its call chain (Session::Callchain), leaf first, as perf
  /// script lists them (context markers dropped; without a callchain, the sample ip alone).
  void Frames(const Sample& s, std::span<const uint64_t> chain, std::vector<ResolvedFrame>* out);
  /// Frames, each as its id: Frame(id) is the frame Frames gives. The ids of addresses no
  /// map holds (frame-pointer walks gone astray: as many as there are such addresses) are
  /// this call's: valid until the next call of FrameIds, Frames or UserFrames.
  void FrameIds(const Sample& s, std::span<const uint64_t> chain, std::vector<FrameId>* out);
  /// Whether `id` is one of the ids FrameIds gives addresses no map holds (valid until its
  /// next call), not a frame of the table.
  static bool Transient(FrameId id) { return id.value >= kUnmapped; }
  /// A frame named here (valid as long as the namer, but see FrameIds).
  const ResolvedFrame& Frame(FrameId id) const {
    return id.value < kUnmapped ? frames_[id.value >> kChunkBits][id.value & (kChunk - 1)]
                                : unmapped_[id.value - kUnmapped];
  }
  /// What the frame prints but its address and offset (symbol, dso, source line, the kernel
  /// and inline marks), numbered: frames of one NameId differ only in those numbers.
  /// (Frames whose strings are equal but stored apart may have different NameIds.)
  NameId NameIdOf(FrameId id) const {
    return id.value < kUnmapped ? name_ids_[id.index()] : unmapped_name_;
  }

 private:
  struct UserAddress;
  // A frame's strings (where they are stored: the namer's, the maps' and the symbolizer's
  // are interned) and marks.
  struct FrameStrings {
    const char* sym;
    const char* dso;
    const char* srcline;
    uint64_t sym_size, dso_size, srcline_size, marks;
    static FrameStrings Of(const ResolvedFrame& f);
    bool operator==(const FrameStrings&) const = default;
  };
  struct FrameStringsHash {
    size_t operator()(const FrameStrings& k) const;
  };
  // A frame whole: its strings and numbers.
  struct FrameFields {
    FrameStrings strings;
    const char* build_id;
    uint64_t build_id_size, addr, symoff;
    bool operator==(const FrameFields&) const = default;
  };
  struct FrameFieldsHash {
    size_t operator()(const FrameFields& k) const;
  };
  struct AddressHash {
    size_t operator()(uint64_t ip) const { return MixU64(ip); }
  };
  // `f` added to the table as a new frame.
  FrameId Add(const ResolvedFrame& f);
  // `f`'s id: an equal frame's (all its fields alike), else Add's. For frames not cached by
  // address (JIT code, the hypervisor's, a stack copy's end).
  FrameId Find(const ResolvedFrame& f);
  // The frame of a user address no map holds (FrameIds: until the next call).
  FrameId UnmappedFrame(uint64_t ip);
  // Where FrameIds of unmapped_ start.
  static constexpr uint32_t kUnmapped = uint32_t{1} << 31;
  // A kernel address's frame: resolved once per address while the kernel's maps stay; with
  // `srcline`, the frame with the source line perf prints for a kernel address.
  FrameId KernelFrame(uint64_t ip, bool srcline);
  ResolvedFrame ResolveKernel(uint64_t ip);
  ResolvedFrame ResolveUser(uint32_t pid, uint64_t ip, MapEntry** map);
  // Appends the frame of a user address, after its inline frames (with SetInline): resolved
  // once per (binary, offset) or (process, map, address), as perf asks addr2line once per
  // address.
  void AddUserFrame(uint32_t pid, uint64_t ip, bool expand, std::vector<FrameId>* out);
  // The frame of user address `ip` in map `m` (not JIT code's), when it has no inline frames
  // and no source line: once per (binary, file offset).
  FrameId PlainUserFrame(uint32_t pid, uint64_t ip, MapEntry& m);
  void ResolveUserFrame(uint32_t pid, uint64_t ip, bool expand, std::vector<ResolvedFrame>* out);
  std::string_view Srcline(const ResolvedFrame& f, UserAddress& at);
  void AddInlineFrames(ResolvedFrame& f, UserAddress& at, std::vector<ResolvedFrame>* out);
  std::string_view NameWithoutLinkage(UserAddress& at);
  void Rename(ResolvedFrame& f, std::string_view name);
  std::string_view UnknownSrcline(std::string_view dso, uint64_t addr);
  std::string_view Intern(const std::string& s) { return strings_.Name(strings_.Intern(s)); }

  ProcessMaps& maps_;
  BinaryTables& tables_;
  Symbolizer& sym_;
  bool inline_ = true;
  bool srcline_ = false;
  // binutils' addr2line, which perf runs once per binary and asks once per address, names a
  // function without a linkage name from the symbol table the first time it is asked about an
  // address of the function's own (in no inlined subroutine), and keeps that name for it
  // (the symbol's when it starts at the function's entry, else the DWARF name); until then,
  // as the caller of an inlined subroutine, the function has its DWARF name. The name given
  // to each (DWARF, address) the first time, and the name each (DWARF, function entry)
  // settled on.
  struct DwarfAddr {
    const DwarfInfo* dwarf;
    uint64_t addr;
    bool operator==(const DwarfAddr&) const = default;
  };
  struct DwarfAddrHash {
    size_t operator()(const DwarfAddr& k) const {
      return std::hash<uint64_t>()(k.addr ^ (reinterpret_cast<uintptr_t>(k.dwarf) << 16));
    }
  };
  std::unordered_map<DwarfAddr, std::string_view, DwarfAddrHash> function_name_at_;
  std::unordered_map<DwarfAddr, std::string_view, DwarfAddrHash> settled_name_;
  // Every frame named, and its NameId, by FrameId; the NameIds by strings; Find's frames.
  // (frames_ in chunks of kChunk that never move: a vector of them copied them all, and
  // faulted in twice their memory, whenever it grew: 3% of a small recording's fold.)
  static constexpr uint32_t kChunkBits = 10, kChunk = uint32_t{1} << kChunkBits;
  std::vector<std::unique_ptr<ResolvedFrame[]>> frames_;
  uint32_t frame_count_ = 0;
  std::vector<NameId> name_ids_;
  FlatMap<FrameStrings, NameId, FrameStringsHash> name_id_of_;
  FlatMap<FrameFields, FrameId, FrameFieldsHash> found_;
  std::vector<ResolvedFrame> unmapped_;  // UnmappedFrame's, since FrameIds began
  NameId unmapped_name_;
  std::vector<ResolvedFrame> resolved_;  // ResolveUserFrame's answer
  std::vector<FrameId> ids_;             // Frames's and UserFrames's
  // PlainUserFrame's answers by (object, file offset): an object is a (binary, path,
  // build-id) as a map names it (MapEntry::object, numbered on first use).
  struct Object {
    const void* binary;
    const char* path;  // (paths and build-ids are interned by ProcessMaps)
    const char* build_id;
    bool operator==(const Object&) const = default;
  };
  struct ObjectHash {
    size_t operator()(const Object& o) const {
      return MixU64(reinterpret_cast<uintptr_t>(o.binary) ^
                    reinterpret_cast<uintptr_t>(o.path) << 7 ^
                    reinterpret_cast<uintptr_t>(o.build_id) << 17);
    }
  };
  FlatMap<Object, uint32_t, ObjectHash> objects_;
  struct ObjectOffset {
    uint32_t object;
    uint64_t offset;
    bool operator==(const ObjectOffset&) const = default;
  };
  struct ObjectOffsetHash {
    size_t operator()(const ObjectOffset& k) const {
      return MixU64(k.offset ^ uint64_t{k.object} << 40);
    }
  };
  FlatMap<ObjectOffset, FrameId, ObjectOffsetHash> plain_frame_at_;
  // AddUserFrame's other answers: a range of user_frames_ by (pid, map serial, address,
  // expand).
  struct UserFrameKey {
    uint32_t pid;
    bool expand;
    MapSerial serial;
    uint64_t ip;
    bool operator==(const UserFrameKey&) const = default;
  };
  struct UserFrameKeyHash {
    size_t operator()(const UserFrameKey& k) const {
      return MixU64(k.ip ^ k.serial.value << 20 ^ uint64_t{k.pid} << 1 ^ k.expand);
    }
  };
  FlatMap<UserFrameKey, std::pair<uint32_t, uint32_t>, UserFrameKeyHash> user_frame_at_;
  std::vector<FrameId> user_frames_;
  // KernelFrame's answers, by address, for the kernel maps of kernel_generation_: a system-
  // wide capture's kernel frames are a third of its frames and a few thousand addresses.
  // Each without, then with a source line (Invalid until asked).
  FlatMap<uint64_t, std::pair<FrameId, FrameId>, AddressHash> kernel_frame_at_;
  uint64_t kernel_generation_ = 0;
  Interner strings_;  // names, dsos and source lines made here
};

}  // namespace pf
