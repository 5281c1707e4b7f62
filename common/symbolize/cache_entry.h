#pragma once
// The fields of an entry of the cache on disk (dwarf_cache.h), written and read back: the one
// mechanism behind every entry kind (ElfSymbols' tables, Addr2lineNames' index, KernelSymbols'
// core end, DwarfInfo's CU indexes and answers).
//
// An entry is fields one after the other in the machine's byte order, as PutRaw writes them:
// EntryWriter appends them, EntryReader (a Cursor) reads them back. An entry's checksum
// (checked when it is mapped) catches a torn or damaged file, not a forged one, so a reader
// still checks what it reads before using it, and the checks every kind needs are here once:
// each read fits in the entry, a tag (the kind's magic or format number) matches, a flag is 0
// or 1, a reserved field is zero, a count of fixed-size items fits in what is left, and the
// entry ends where its last field does. A failed check is a `false` that the caller turns into
// "no entry" (the data is made again and the entry replaced), never an error.

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/byte_cursor.h"

namespace pf {

/// Appends an entry's fields as EntryReader reads them.
class EntryWriter {
 public:
  EntryWriter() = default;
  /// An entry that starts with `tag` (its kind's magic bytes).
  explicit EntryWriter(std::string_view tag) : out_(tag) {}

  /// A value as it is in memory (an integer, or an array or struct of them without padding).
  template <typename T>
  void Put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    PutRaw(&out_, v);
  }
  /// A flag, as one byte: 0 or 1.
  void Flag(bool v) { Put<uint8_t>(v ? 1 : 0); }
  /// A reserved field of T's size: zero.
  template <typename T>
  void Zero() {
    Put<T>(0);
  }
  /// A 32-bit length, then the bytes (EntryReader::Str, EntryReader::View).
  void Str(std::string_view s) { PutStr(&out_, s); }
  /// Zeros up to the next multiple of 8 from the entry's start: an array after it can be read
  /// in place from an 8-aligned mapping (EntryReader::Array).
  void Pad8() { PutPad8(&out_); }
  /// Items as they are in memory, without a count.
  template <typename T>
  void Array(std::span<const T> v) {
    static_assert(std::is_trivially_copyable_v<T>);
    PutArray(&out_, v);
  }
  /// Bytes as they are: fields another entry held (copied unchanged).
  void Append(std::string_view bytes) { out_.append(bytes); }

  /// Room for `n` bytes in all, so that a large entry is built without being moved.
  void Reserve(size_t n) { out_.reserve(n); }
  size_t size() const { return out_.size(); }
  /// The entry; the writer is empty after.
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

/// Reads an entry's fields from `bytes` with the checks the file comment lists; each returns
/// false when the field is not there or fails its check (the position is then unspecified).
class EntryReader : public Cursor {
 public:
  explicit EntryReader(std::string_view bytes)
      : Cursor(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                        bytes.size())),
        bytes_(bytes) {}
  /// A reader of the `size` bytes at `at` of `bytes` (none when they are not all there).
  static EntryReader At(std::string_view bytes, size_t at, size_t size = SIZE_MAX) {
    return EntryReader(at > bytes.size() ? std::string_view() : bytes.substr(at, size));
  }

  /// The next bytes are `tag`.
  bool Tag(std::string_view tag) {
    std::span<const uint8_t> b;
    return Bytes(tag.size(), &b) && std::memcmp(b.data(), tag.data(), tag.size()) == 0;
  }
  /// A value of T as Put wrote it (T: an integer, or an array of them: every byte pattern
  /// is a value).
  template <typename T>
  bool Get(T* v) {
    static_assert(std::has_unique_object_representations_v<T> && !std::is_same_v<T, bool>);
    std::span<const uint8_t> b;
    if (!Bytes(sizeof(T), &b)) return false;
    std::memcpy(v, b.data(), sizeof(T));
    return true;
  }
  /// The next value of T equals `want` (a format number written as a tag).
  template <typename T>
  bool Expect(T want) {
    T v;
    return Get(&v) && v == want;
  }
  /// A flag: a byte that is 0 or 1.
  bool Flag(bool* v) {
    uint8_t b;
    if (!U8(&b) || b > 1) return false;
    *v = b != 0;
    return true;
  }
  /// A reserved field of T's size, which must be zero.
  template <typename T>
  bool Zero() {
    return Expect<T>(0);
  }
  /// A count of items of `item_bytes` bytes each that still follow (at least that many bytes
  /// are left): what bounds a vector sized from an entry.
  template <typename T>
  bool Count(T* n, size_t item_bytes) {
    return Get(n) && static_cast<uint64_t>(*n) <= left() / item_bytes;
  }
  /// A string as EntryWriter::Str wrote it, as a view of the entry's bytes.
  bool View(std::string_view* s) {
    uint32_t n;
    std::span<const uint8_t> b;
    if (!U32(&n) || !Bytes(n, &b)) return false;
    *s = std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  }
  /// The entry's bytes from here on (not read).
  std::string_view rest() const { return bytes_.substr(pos()); }
  /// Every byte was read: the entry ends where its last field does.
  bool AtEnd() const { return left() == 0; }

 private:
  std::string_view bytes_;
};

/// An entry of the cache on disk, mapped (MapCachedImage, checksum checked): its bytes, which
/// stay mapped while a copy of `owner` lives (then unmapped by UnmapWhenDone).
struct MappedEntry {
  std::shared_ptr<const char> owner;
  std::string_view bytes;
  explicit operator bool() const { return owner != nullptr; }
};

/// The entry `key` under `dir`, or none (empty dir or key, no entry, or one that fails its
/// size or checksum).
MappedEntry MapCachedEntry(const std::string& dir, const std::string& key);

}  // namespace pf
