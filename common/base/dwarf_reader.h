#pragma once
// A bounds-checked reader of DWARF's encodings (LEB128, the pointer encodings of .eh_frame)
// over one section. A read that does not fit sets ok() to false and returns 0, so a parser
// may read a whole structure and check once.

#include <cstdint>
#include <cstring>
#include <string_view>

namespace pf {

/// DW_EH_PE_* pointer encodings (LSB Core, .eh_frame).
enum : uint8_t {
  kPeAbsptr = 0x00, kPeUleb128 = 0x01, kPeUdata2 = 0x02, kPeUdata4 = 0x03, kPeUdata8 = 0x04,
  kPeSleb128 = 0x09, kPeSdata2 = 0x0a, kPeSdata4 = 0x0b, kPeSdata8 = 0x0c,
  kPePcrel = 0x10, kPeTextrel = 0x20, kPeDatarel = 0x30, kPeFuncrel = 0x40, kPeAligned = 0x50,
  kPeIndirect = 0x80, kPeOmit = 0xff,
};

class DwarfReader {
 public:
  /// `base` is the ELF address of data[0] (for pc-relative pointers).
  DwarfReader(std::string_view data, uint64_t base = 0) : d_(data), base_(base) {}

  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t left() const { return ok_ ? d_.size() - pos_ : 0; }
  bool at_end() const { return !ok_ || pos_ >= d_.size(); }
  void Seek(size_t pos) {
    if (pos > d_.size()) ok_ = false;
    else pos_ = pos;
  }
  void Skip(uint64_t n) {
    if (n > d_.size() - pos_) ok_ = false;
    else pos_ += n;
  }

  template <typename T>
  T Fixed() {
    T v{};
    if (!ok_ || sizeof(T) > d_.size() - pos_) {
      ok_ = false;
      return T{};
    }
    std::memcpy(&v, d_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint8_t U8() { return Fixed<uint8_t>(); }
  uint16_t U16() { return Fixed<uint16_t>(); }
  uint32_t U32() { return Fixed<uint32_t>(); }
  uint64_t U64() { return Fixed<uint64_t>(); }

  uint64_t Uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      uint8_t b = U8();
      if (!ok_) return 0;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      if (shift > 70) {  // an endless run of continuation bytes: corrupt
        ok_ = false;
        return 0;
      }
    }
  }
  int64_t Sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
      b = U8();
      if (!ok_) return 0;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if (shift > 77) {
        ok_ = false;
        return 0;
      }
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }
  /// A NUL-terminated string.
  std::string_view CString() {
    if (!ok_) return {};
    const void* nul = std::memchr(d_.data() + pos_, 0, d_.size() - pos_);
    if (nul == nullptr) {
      ok_ = false;
      return {};
    }
    size_t n = static_cast<size_t>(static_cast<const char*>(nul) - (d_.data() + pos_));
    std::string_view s = d_.substr(pos_, n);
    pos_ += n + 1;
    return s;
  }

  /// A pointer in DW_EH_PE encoding `enc` (indirect pointers are refused: they would need
  /// the process's memory). `datarel` is the base of DW_EH_PE_datarel (.eh_frame_hdr).
  uint64_t Pointer(uint8_t enc, uint64_t datarel = 0) {
    if (enc == kPeOmit) return 0;
    uint64_t here = base_ + pos_;
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case kPeAbsptr: v = U64(); break;
      case kPeUleb128: v = Uleb(); break;
      case kPeUdata2: v = U16(); break;
      case kPeUdata4: v = U32(); break;
      case kPeUdata8: v = U64(); break;
      case kPeSleb128: v = static_cast<uint64_t>(Sleb()); break;
      case kPeSdata2: v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(U16()))); break;
      case kPeSdata4: v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(U32()))); break;
      case kPeSdata8: v = U64(); break;
      default: ok_ = false; return 0;
    }
    switch (enc & 0x70) {
      case 0: break;
      case kPePcrel: v += here; break;
      case kPeDatarel: v += datarel; break;
      case kPeTextrel: case kPeFuncrel: case kPeAligned: default: ok_ = false; return 0;
    }
    if (enc & kPeIndirect) {
      ok_ = false;
      return 0;
    }
    return v;
  }
  /// The size in bytes of a fixed-size encoding (0 for LEB128 and unknown ones).
  static size_t EncodedSize(uint8_t enc) {
    switch (enc & 0x0f) {
      case kPeAbsptr: case kPeUdata8: case kPeSdata8: return 8;
      case kPeUdata4: case kPeSdata4: return 4;
      case kPeUdata2: case kPeSdata2: return 2;
      default: return 0;
    }
  }

 private:
  std::string_view d_;
  uint64_t base_ = 0;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace pf
