// The parsers of records.h: each reads its record's fixed fields through a Cursor, then the
// string that follows them. The kernel pads a string with NULs to 8 bytes, and a sample_id may
// follow (sample_id_all), so a string is read up to its first NUL, or to the end of a body
// that has none.

#include "pfstream/records.h"

#include <algorithm>
#include <cstring>

#include "base/byte_cursor.h"

namespace pf {

namespace {

constexpr uint16_t kMiscCommExec = 1 << 13;
constexpr uint16_t kMiscMmapBuildId = 1 << 14;
constexpr uint16_t kMiscBuildIdSize = 1 << 15;

// The NUL-terminated string the cursor is at (to its NUL, or to the end of the body).
std::string_view CString(Cursor* c) {
  std::span<const uint8_t> rest;
  c->Bytes(c->left(), &rest);
  const char* p = reinterpret_cast<const char*>(rest.data());
  return std::string_view(p, strnlen(p, rest.size()));
}

}  // namespace

bool ParseComm(const Record& r, CommRecord* out) {
  Cursor c(r.body);
  if (!c.U32(&out->pid) || !c.U32(&out->tid)) return false;
  out->comm = CString(&c);
  out->exec = r.misc & kMiscCommExec;
  return true;
}

bool ParseFork(const Record& r, ForkRecord* out) {
  Cursor c(r.body);
  return c.U32(&out->pid) && c.U32(&out->ppid) && c.U32(&out->tid) && c.U32(&out->ptid);
}

bool ParseMmap(const Record& r, MmapRecord* out) {
  Cursor c(r.body);
  *out = MmapRecord();
  if (!c.U32(&out->pid) || !c.U32(&out->tid) || !c.U64(&out->start) || !c.U64(&out->len) ||
      !c.U64(&out->pgoff)) {
    return false;
  }
  out->mmap2 = r.type == kRecordMmap2;
  if (out->mmap2) {
    std::span<const uint8_t> id;
    if (!c.Bytes(24, &id) || !c.U32(&out->prot) || !c.U32(&out->flags)) return false;
    if (r.misc & kMiscMmapBuildId) {
      out->has_build_id = true;
      out->build_id = std::string_view(reinterpret_cast<const char*>(id.data()) + 4,
                                       std::min<size_t>(id[0], 20));
    } else {
      Cursor d(id);
      d.U32(&out->maj);
      d.U32(&out->min);
      d.U64(&out->ino);
      d.U64(&out->ino_generation);
    }
  }
  out->filename = CString(&c);
  return true;
}

bool ParseLost(const Record& r, uint64_t* lost) {
  Cursor c(r.body);
  if (r.type == kRecordLost) return c.Skip(8) && c.U64(lost);
  if (r.type == kRecordLostSamples) return c.U64(lost);
  return false;
}

bool ParseKsymbol(const Record& r, KsymbolRecord* out) {
  Cursor c(r.body);
  if (!c.U64(&out->addr) || !c.U32(&out->len) || !c.U16(&out->ksym_type) || !c.U16(&out->flags))
    return false;
  out->name = CString(&c);
  return true;
}

bool ParseBuildIdRecord(const Record& r, PerfDataReader::BuildId* out) {
  Cursor c(r.body);
  std::span<const uint8_t> id;
  if (!c.U32(&out->pid) || !c.Bytes(24, &id)) return false;
  size_t id_len = (r.misc & kMiscBuildIdSize) ? std::min<size_t>(id[20], 20) : 20;
  out->id.assign(reinterpret_cast<const char*>(id.data()), id_len);
  out->path.assign(CString(&c));
  return true;
}

bool RecordView(std::span<const uint8_t> bytes, Record* r) {
  Cursor c(bytes);
  uint16_t size;
  if (!c.U32(&r->type) || !c.U16(&r->misc) || !c.U16(&size)) return false;
  if (size < 8 || size > bytes.size()) return false;
  r->body = bytes.subspan(8, size - 8);
  return true;
}

}  // namespace pf
