#pragma once
// The bits of perf_event_attr's sample_type and read_format (linux/perf_event.h), under the
// names pf's readers test them by, and the two helpers that lay a sample's fields out: a
// little-endian 64-bit load and a bit count. One list, for the reader (perf_data.cpp,
// perf_sample.cpp) and for what asks an event which fields its samples carry.

#include <cstdint>
#include <cstring>

namespace pf::sample_layout {

// sample_type bits.
enum : uint64_t {
  kIp = 1 << 0, kTid = 1 << 1, kTime = 1 << 2, kAddr = 1 << 3, kRead = 1 << 4,
  kCallchain = 1 << 5, kId = 1 << 6, kCpu = 1 << 7, kPeriod = 1 << 8, kStreamId = 1 << 9,
  kRaw = 1 << 10, kBranchStack = 1 << 11, kRegsUser = 1 << 12, kStackUser = 1 << 13,
  kWeight = 1 << 14, kDataSrc = 1 << 15, kIdentifier = 1 << 16, kTransaction = 1 << 17,
  kRegsIntr = 1 << 18, kPhysAddr = 1 << 19, kCgroup = 1 << 21, kDataPageSize = 1 << 22,
  kCodePageSize = 1 << 23, kWeightStruct = 1 << 24,
};
// read_format bits.
enum : uint64_t { kTotalEnabled = 1, kTotalRunning = 2, kFormatId = 4, kFormatGroup = 8,
                  kFormatLost = 16 };

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// (Not __builtin_popcountll: without -mpopcnt g++ calls libgcc's __popcountdi2, ~1% of a
// recording's fold, for the few bits of a sample type read at every record.)
constexpr int Popcount(uint64_t v) {
  v = v - ((v >> 1) & 0x5555555555555555ull);
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<int>((v * 0x0101010101010101ull) >> 56);
}
static_assert(Popcount(0) == 0 && Popcount(0b1011) == 3 && Popcount(~uint64_t{0}) == 64);

}  // namespace pf::sample_layout
