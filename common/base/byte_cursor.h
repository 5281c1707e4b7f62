#pragma once
// The base module (common/base/): what every other module may use and that depends on no
// other: the error types (error.h), string interning (intern.h), counted skips
// (diagnostics.h), bounds-checked byte and DWARF readers (byte_cursor.h, dwarf_reader.h),
// checksums, and small helpers for threads, prefetching and the end of the process.
//
// A bounds-checked cursor over bytes in the machine's (little-endian) order, for the binary
// readers (perf.data records, embedded symbol tables, the cache's entries): every read says
// whether it fitted. PutRaw writes what it reads.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace pf {

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> d) : d_(d) {}
  bool U64(uint64_t* v) { return Get(v, 8); }
  bool U32(uint32_t* v) { return Get(v, 4); }
  bool U16(uint16_t* v) { return Get(v, 2); }
  bool U8(uint8_t* v) { return Get(v, 1); }
  bool Skip(size_t n) {
    if (n > d_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  // Records are 8-byte aligned in every valid input (the kernel pads them); anything else
  // is corrupt, and a misaligned view would be undefined behaviour.
  bool Span64(size_t n, std::span<const uint64_t>* out) { return Array(n, out); }
  bool Bytes(size_t n, std::span<const uint8_t>* out) {
    if (n > d_.size() - pos_) return false;
    *out = d_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  /// Skips to the next multiple of 8 from the start; the bytes skipped must be zero.
  bool Pad8() {
    size_t n = (8 - pos_ % 8) % 8;
    if (n > d_.size() - pos_) return false;
    for (size_t i = 0; i < n; ++i)
      if (d_[pos_ + i] != 0) return false;
    pos_ += n;
    return true;
  }
  /// A view of `n` T's stored as they are in memory, where they are aligned for T (else
  /// false). T must be a struct whose every byte pattern is a valid value (integers).
  template <typename T>
  bool Array(size_t n, std::span<const T>* out) {
    if (n > (d_.size() - pos_) / sizeof(T)) return false;
    if (reinterpret_cast<uintptr_t>(d_.data() + pos_) % alignof(T) != 0) return false;
    *out = std::span<const T>(reinterpret_cast<const T*>(d_.data() + pos_), n);
    pos_ += n * sizeof(T);
    return true;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return d_.size() - pos_; }
  /// A string written as a 32-bit length and its bytes.
  bool Str(std::string* s) {
    uint32_t n;
    std::span<const uint8_t> b;
    if (!U32(&n) || !Bytes(n, &b)) return false;
    s->assign(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  }

 private:
  template <typename T>
  bool Get(T* v, size_t n) {
    if (n > d_.size() - pos_) return false;
    std::memcpy(v, d_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> d_;
  size_t pos_ = 0;
};

/// Appends the bytes of a value, in the machine's byte order.
template <typename T>
void PutRaw(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// Appends zeros up to the next multiple of 8 from the start of `out` (Cursor::Pad8).
inline void PutPad8(std::string* out) { out->append((8 - out->size() % 8) % 8, '\0'); }

/// Appends an array as Cursor::Array reads it.
template <typename T>
void PutArray(std::string* out, std::span<const T> v) {
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// Appends a string as Cursor::Str reads it: a 32-bit length, then its bytes.
inline void PutStr(std::string* out, std::string_view s) {
  PutRaw(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

}  // namespace pf
