// What DwarfInfo keeps in the cache on disk besides the inflated image (dwarf_cache.h): each
// debug file's CU indexes, so that a later run takes a CU's functions and ranges instead of
// walking the CU, and (for the tools) its answers, so that a later run answers an address
// without reading the DWARF at all. Entries are written and read with EntryWriter and
// EntryReader (cache_entry.h); a restored entry is checked as it is read (the layout when it
// is mapped, a CU's contents against the DWARF when the CU is first asked for, an answer when
// its address is), so a bad entry costs a walk, never a wrong read. The indexes a run changed
// are stored when the DwarfInfo goes, or at exit for those kept until then.

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "symbolize/cache_entry.h"
#include "symbolize/dwarf_cache.h"
#include "symbolize/dwarf_info_internal.h"

namespace pf {

namespace {

// The DwarfInfos whose CU indexes changed, stored at exit (StoreChangedIndexes) unless
// destroyed before: a run's Symbolizer is kept until the process ends (base/teardown.h).
std::mutex& ChangedIndexesMu() {
  static std::mutex mu;
  return mu;
}
std::vector<DwarfInfo*>& ChangedIndexes() {
  static auto* all = new std::vector<DwarfInfo*>;
  return *all;
}

}  // namespace

void StoreChangedIndexes() {
  std::lock_guard lock(ChangedIndexesMu());
  std::vector<std::string> dirs;  // to trim, once each
  for (DwarfInfo* info : ChangedIndexes()) {
    info->index_registered_ = false;
    if (info->WriteIndex() &&
        std::find(dirs.begin(), dirs.end(), info->index_dir_) == dirs.end()) {
      dirs.push_back(info->index_dir_);
    }
  }
  ChangedIndexes().clear();
  for (const std::string& dir : dirs) TrimCacheNowAndThen(dir, kCacheBytes);
}

DwarfInfo::~DwarfInfo() {
  if (index_registered_) {
    StoreIndex();
    std::lock_guard lock(ChangedIndexesMu());
    std::vector<DwarfInfo*>& all = ChangedIndexes();
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }
}

// The CU indexes kept on disk. Indexing a CU reads all its DIEs outside functions (and all
// of them where there is no DW_AT_sibling, as LLVM writes): 10-60 us a CU of CPython or of a
// Rust crate, where a recording needs tens to hundreds of CUs (libpython's 103 took 5.9 ms
// of a 22 ms fold). So the indexes a run makes are kept in the cache (dwarf_cache.h), one
// entry per debug file named after its identity, and a later run takes a CU's index from
// there, checked against the DWARF, instead of walking the CU.
//
// An entry, in host byte order:
//   "pfcuidx1", u64 count of CUs, then per CU (ascending CU offsets) a 32-byte header:
//     u64 CU DIE offset, u32 functions, u32 ranges, i32 DW_AT_language (-1: none),
//     u8 base known, u8 full, u16 zero, u64 base;
//   then per CU, in the same order, its functions (u64 DIE offset, u64 entry) and its
//   address ranges by start (u64 lo, u64 hi, u32 function, u32 zero).
// RestoreIndex checks the layout (sizes, order, zeros), RestoreUnit a CU's contents when the
// CU is first asked for: every range non-empty, in order and naming a function, every
// function's DIE inside the CU. So a bad entry (its checksum forged) costs a walk, never a
// wrong read; LoadInlines and NameOf read from a restored DIE offset as from a walked one.
namespace {

constexpr std::string_view kSavedIndexMagic("pfcuidx1", 8);
constexpr size_t kSavedHead = 32, kSavedFunction = 16, kSavedRange = 24;

// A CU's header in a saved index.
struct SavedHead {
  uint64_t cu = 0, base = 0;
  uint32_t functions = 0, ranges = 0;
  int32_t language = -1;
  bool base_known = false, full = false;
  void Write(EntryWriter& w) const {
    w.Put(cu);
    w.Put(functions);
    w.Put(ranges);
    w.Put(language);
    w.Flag(base_known);
    w.Flag(full);
    w.Zero<uint16_t>();
    w.Put(base);
  }
  bool Read(EntryReader& r) {
    return r.Get(&cu) && r.Get(&functions) && r.Get(&ranges) && r.Get(&language) &&
           r.Flag(&base_known) && r.Flag(&full) && r.Zero<uint16_t>() && r.Get(&base);
  }
};

}  // namespace

std::string DwarfInfo::SavedIndex() const {
  // The units made or restored here (walked by the fast walk), and the saved ones not asked for.
  struct Entry {
    uint64_t cu;
    const Unit* unit;
    const SavedUnit* saved;
  };
  std::vector<Entry> entries;
  for (const auto& [cu, u] : units_) {
    if (u && u->scanned) entries.push_back({cu, u.get(), nullptr});
  }
  for (const SavedUnit& su : saved_) {
    if (units_.find(su.cu) == units_.end()) entries.push_back({su.cu, nullptr, &su});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.cu < b.cu; });
  EntryWriter w(kSavedIndexMagic);
  w.Put<uint64_t>(entries.size());
  for (const Entry& e : entries) {
    if (e.saved) {
      w.Append(saved_bytes_.substr(e.saved->head, kSavedHead));
      continue;
    }
    const Unit& u = *e.unit;
    SavedHead{.cu = e.cu,
              .base = u.base,
              .functions = static_cast<uint32_t>(u.functions.size()),
              .ranges = static_cast<uint32_t>(u.by_address.size()),
              .language = u.language,
              .base_known = u.base_known,
              .full = u.full}
        .Write(w);
  }
  for (const Entry& e : entries) {
    if (e.saved) {
      w.Append(saved_bytes_.substr(e.saved->data, e.saved->functions * kSavedFunction +
                                                      e.saved->ranges * kSavedRange));
      continue;
    }
    for (const Unit::Function& f : e.unit->functions) {
      w.Put(f.die);
      w.Put(f.entry);
    }
    for (const Unit::FunctionRange& r : e.unit->by_address) {
      w.Put(r.lo);
      w.Put(r.hi);
      w.Put(r.function);
      w.Zero<uint32_t>();
    }
  }
  return w.Take();
}

bool DwarfInfo::RestoreIndex(std::shared_ptr<const char> owner, std::string_view bytes) {
  EntryReader r(bytes);
  uint64_t count;
  if (!r.Tag(kSavedIndexMagic) || !r.Count(&count, kSavedHead)) return false;
  std::vector<SavedUnit> units;
  units.reserve(count);
  size_t data = r.pos() + count * kSavedHead;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t head = r.pos();
    SavedHead h;
    if (!h.Read(r) || (!units.empty() && h.cu <= units.back().cu)) return false;
    const uint64_t size = uint64_t{h.functions} * kSavedFunction + uint64_t{h.ranges} * kSavedRange;
    if (size > bytes.size() - data) return false;
    units.push_back({h.cu, head, data, h.functions, h.ranges});
    data += size;
  }
  if (data != bytes.size()) return false;
  saved_owner_ = std::move(owner);
  saved_bytes_ = bytes;
  saved_ = std::move(units);
  index_loaded_ = true;
  return true;
}

bool DwarfInfo::RestoreUnit(Unit& u, CuRef& cu) {
  auto it = std::lower_bound(saved_.begin(), saved_.end(), cu.die,
                             [](const SavedUnit& su, uint64_t die) { return su.cu < die; });
  if (it == saved_.end() || it->cu != cu.die || !ReadUnitHeader(u, cu)) return false;
  const SavedUnit& su = *it;
  EntryReader head = EntryReader::At(saved_bytes_, su.head);
  SavedHead h;
  if (!h.Read(head)) return false;
  EntryReader r = EntryReader::At(saved_bytes_, su.data);
  std::vector<Unit::Function> functions(su.functions);
  for (Unit::Function& f : functions) {
    if (!r.Get(&f.die) || !r.Get(&f.entry) || f.die <= cu.die || f.die >= u.header.end) {
      return false;
    }
  }
  std::vector<Unit::FunctionRange> ranges(su.ranges);
  for (size_t i = 0; i < ranges.size(); ++i) {
    Unit::FunctionRange& g = ranges[i];
    if (!r.Get(&g.lo) || !r.Get(&g.hi) || !r.Get(&g.function) || !r.Zero<uint32_t>() ||
        g.lo >= g.hi || g.function >= su.functions || (i > 0 && g.lo < ranges[i - 1].lo)) {
      return false;
    }
  }
  u.functions = std::move(functions);
  u.by_address = std::move(ranges);
  u.language = h.language;
  u.base_known = h.base_known;
  u.full = h.full;
  u.base = h.base;
  u.scanned = true;
  return true;
}

void DwarfInfo::LoadSavedIndex() {
  index_loaded_ = true;
  if (MappedEntry entry = MapCachedEntry(index_dir_, index_key_)) {
    RestoreIndex(std::move(entry.owner), entry.bytes);
  }
}

void DwarfInfo::IndexChanged() {
  index_changed_ = true;
  Register();
}

void DwarfInfo::Register() {
  if (index_registered_ || index_key_.empty()) return;
  index_registered_ = true;
  std::lock_guard lock(ChangedIndexesMu());
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(StoreChangedIndexes); });
  ChangedIndexes().push_back(this);
}

bool DwarfInfo::WriteIndex() {
  bool wrote = false;
  if (index_changed_ && !index_key_.empty()) {
    index_changed_ = false;
    wrote = StoreCachedImageUntrimmed(index_dir_, index_key_, SavedIndex());
  }
  if (locations_changed_ && !locations_key_.empty()) {
    locations_changed_ = false;
    std::string saved = SavedLocations();
    if (!saved.empty()) wrote |= StoreCachedImageUntrimmed(index_dir_, locations_key_, saved);
  }
  return wrote;
}

void DwarfInfo::StoreIndex() {
  if (WriteIndex()) TrimCacheNowAndThen(index_dir_, kCacheBytes);
}

// The answers kept on disk. With the CU indexes restored, what a warm run still spends on
// inline frames is reading each function's inline tree and names, and the abbreviations of
// its CU (CPython: about 8 ms of a 26 ms fold; a Rust program 3 of 10). So the Locations a run
// makes are kept too, one entry per debug file (and options, and pf version), and a later run
// answers an address it holds without reading the DWARF at all.
//
// An entry, in host byte order:
//   "pfloc001", u64 count, then per address (ascending) u64 address, u32 offset, u32 size;
//   then the answers, one after another in that order (each offset is the sum of the sizes
//   before it): u8 function_linkage, u64 function_entry, the function and the srcline as
//   strings (u32 length, bytes), u32 count of inlined functions, then per inlined function
//   its name and its call site as strings.
// RestoreLocations checks the layout, RestoreLocation an answer when its address is first
// asked for (every length within the answer, which it must fill exactly); an answer that
// fails is made again.
namespace {

constexpr std::string_view kSavedLocationsMagic("pfloc001", 8);
constexpr size_t kSavedLocationsHead = 16, kSavedLocationRow = 16;
// A set this large is not kept whole: only the run's own answers are.
constexpr size_t kMaxSavedLocations = size_t{1} << 20;

struct LocationRow {
  uint64_t vaddr = 0;
  uint32_t offset = 0, size = 0;
  void Write(EntryWriter& w) const {
    w.Put(vaddr);
    w.Put(offset);
    w.Put(size);
  }
  bool Read(EntryReader& r) { return r.Get(&vaddr) && r.Get(&offset) && r.Get(&size); }
};

void PutLocation(EntryWriter& w, const DwarfInfo::Location& loc) {
  w.Flag(loc.function_linkage);
  w.Put<uint64_t>(loc.function_entry);
  w.Str(loc.function);
  w.Str(loc.srcline);
  w.Put(static_cast<uint32_t>(loc.inlined.size()));
  for (size_t i = 0; i < loc.inlined.size(); ++i) {
    w.Str(loc.inlined[i]);
    w.Str(i < loc.call_sites.size() ? std::string_view(loc.call_sites[i]) : "");
  }
}

// An answer as PutLocation wrote it, filling `r` exactly.
bool ReadLocation(EntryReader& r, DwarfInfo::Location* loc) {
  uint32_t inlined;
  // (Each inlined function holds two strings: at least 8 bytes.)
  if (!r.Flag(&loc->function_linkage) || !r.Get(&loc->function_entry) ||
      !r.Str(&loc->function) || !r.Str(&loc->srcline) || !r.Count(&inlined, 8)) {
    return false;
  }
  loc->inlined.resize(inlined);
  loc->call_sites.resize(inlined);
  for (uint32_t i = 0; i < inlined; ++i) {
    if (!r.Str(&loc->inlined[i]) || !r.Str(&loc->call_sites[i])) return false;
  }
  return r.AtEnd();
}

}  // namespace

std::string DwarfInfo::SavedLocations() const {
  // This run's answers, and the saved ones not asked for (as they are), by address.
  struct Entry {
    uint64_t vaddr;
    const Location* loc;
    std::string_view saved;
  };
  std::vector<Entry> entries;
  entries.reserve(cache_.size());
  for (const auto& [vaddr, loc] : cache_) entries.push_back({vaddr, &loc, {}});
  const size_t data = kSavedLocationsHead + saved_location_count_ * kSavedLocationRow;
  if (cache_.size() + saved_location_count_ <= kMaxSavedLocations) {
    EntryReader rows = EntryReader::At(saved_locations_, kSavedLocationsHead);
    for (size_t i = 0; i < saved_location_count_; ++i) {
      LocationRow row;
      row.Read(rows);  // (checked whole by RestoreLocations)
      if (cache_.count(row.vaddr) == 0) {
        std::string_view saved = saved_locations_.substr(data + row.offset, row.size);
        entries.push_back({row.vaddr, nullptr, saved});
      }
    }
  } else if (cache_.size() > kMaxSavedLocations) {
    return "";
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.vaddr < b.vaddr; });
  EntryWriter answers;
  EntryWriter w(kSavedLocationsMagic);
  w.Put<uint64_t>(entries.size());
  for (const Entry& e : entries) {
    const size_t at = answers.size();
    if (e.loc) {
      PutLocation(answers, *e.loc);
    } else {
      answers.Append(e.saved);
    }
    if (answers.size() > UINT32_MAX) return "";
    LocationRow{e.vaddr, static_cast<uint32_t>(at), static_cast<uint32_t>(answers.size() - at)}
        .Write(w);
  }
  w.Append(answers.Take());
  return w.Take();
}

bool DwarfInfo::RestoreLocations(std::shared_ptr<const char> owner, std::string_view bytes) {
  EntryReader r(bytes);
  uint64_t count;
  if (!r.Tag(kSavedLocationsMagic) || !r.Count(&count, kSavedLocationRow)) return false;
  const size_t data = kSavedLocationsHead + count * kSavedLocationRow;
  uint64_t next = 0, last = 0;
  for (uint64_t i = 0; i < count; ++i) {
    LocationRow row;
    if (!row.Read(r) || row.offset != next || row.size > bytes.size() - data - next ||
        (i > 0 && row.vaddr <= last)) {
      return false;
    }
    next += row.size;
    last = row.vaddr;
  }
  if (data + next != bytes.size()) return false;
  saved_locations_owner_ = std::move(owner);
  saved_locations_ = bytes;
  saved_location_count_ = count;
  locations_loaded_ = true;
  return true;
}

bool DwarfInfo::RestoreLocation(uint64_t vaddr, Location* loc) const {
  // The row of `vaddr`, by binary search over the rows in place.
  size_t l = 0, u = saved_location_count_;
  LocationRow row;
  bool found = false;
  while (l < u && !found) {
    const size_t i = (l + u) / 2;
    EntryReader r = EntryReader::At(saved_locations_, kSavedLocationsHead + i * kSavedLocationRow);
    if (!row.Read(r)) return false;
    if (row.vaddr < vaddr) {
      l = i + 1;
    } else if (row.vaddr > vaddr) {
      u = i;
    } else {
      found = true;
    }
  }
  if (!found) return false;
  const size_t data = kSavedLocationsHead + saved_location_count_ * kSavedLocationRow;
  EntryReader r = EntryReader::At(saved_locations_, data + row.offset, row.size);
  return ReadLocation(r, loc);
}

void DwarfInfo::LoadSavedLocations() {
  locations_loaded_ = true;
  if (locations_key_.empty()) return;
  if (MappedEntry entry = MapCachedEntry(index_dir_, locations_key_)) {
    RestoreLocations(std::move(entry.owner), entry.bytes);
  }
}

}  // namespace pf
