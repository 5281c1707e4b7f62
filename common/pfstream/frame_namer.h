#pragma once
// Naming a sample's frames as perf script names them (a part of the Session, session.h): an
// address is resolved to its map, then to (dso, file offset), then to a symbol through the
// Symbolizer; for a user frame unwound from a stack copy, the functions inlined there come
// before it (from DWARF), and with source lines each frame gets its line. Frames are
// resolved once per distinct (process maps, address); callers fold by address first where
// they can.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/flat_map.h"
#include "base/intern.h"
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

class FrameNamer {
 public:
  FrameNamer(ProcessMaps& maps, BinaryTables& tables, Symbolizer& symbolizer);
  ~FrameNamer();
  FrameNamer(const FrameNamer&) = delete;
  FrameNamer& operator=(const FrameNamer&) = delete;

  /// Inline frames before each user frame unwound from a stack copy; on by default.
  void SetInline(bool on) { inline_ = on; }
  /// A source line for each frame, as perf script -F +srcline prints it.
  void SetSrcline(bool on) { srcline_ = on; }

  /// Resolves `ip` as seen by process `pid` in kernel or user mode (and gives its map).
  ResolvedFrame Resolve(uint32_t pid, uint64_t ip, bool kernel, MapEntry** map = nullptr) {
    if (map) *map = nullptr;
    return kernel ? KernelFrame(ip) : ResolveUser(pid, ip, map);
  }
  /// The frames of user address `ip` of process `pid`, appended to `out`: the functions
  /// inlined there (innermost first, with SetInline), then the frame itself. For profiles
  /// whose stacks are addresses alone (gperftools).
  void UserFrames(uint32_t pid, uint64_t ip, std::vector<ResolvedFrame>* out) {
    AddUserFrame(pid, ip, true, out);
  }
  /// The frames of a sample for its call chain (Session::Callchain), leaf first, as perf
  /// script lists them (context markers dropped; without a callchain, the sample ip alone).
  void Frames(const Sample& s, std::span<const uint64_t> chain, std::vector<ResolvedFrame>* out);

 private:
  struct UserAddress;
  // A kernel address's frame: resolved once per address while the kernel's maps stay.
  const ResolvedFrame& KernelFrame(uint64_t ip);
  ResolvedFrame ResolveKernel(uint64_t ip);
  ResolvedFrame ResolveUser(uint32_t pid, uint64_t ip, MapEntry** map);
  // Appends the frame of a user address, after its inline frames (with SetInline): resolved
  // once per (process, map, address), as perf asks addr2line once per address.
  void AddUserFrame(uint32_t pid, uint64_t ip, bool expand, std::vector<ResolvedFrame>* out);
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
  // AddUserFrame's answers: a range of user_frames_ by (pid, map serial, address, expand).
  // Their dso views point into the map, which lives as long as its serial is found.
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
  std::vector<ResolvedFrame> user_frames_;
  // KernelFrame's answers, by address, for the kernel maps of kernel_generation_: a system-
  // wide capture's kernel frames are a third of its frames and a few thousand addresses.
  struct AddressHash {
    size_t operator()(uint64_t ip) const { return MixU64(ip); }
  };
  FlatMap<uint64_t, uint32_t, AddressHash> kernel_frame_at_;
  std::vector<ResolvedFrame> kernel_frames_;
  uint64_t kernel_generation_ = 0;
  Interner strings_;  // names, dsos and source lines made here
};

}  // namespace pf
