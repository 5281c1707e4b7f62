// Fuzz target: tracing data (pfstream/trace_formats.h), the tracepoints' formats a recording
// takes along, read through libtraceevent, and records printed with them. The input is the
// tracing data; its last 256 bytes (or all of it, when shorter) also serve as a record of
// every event it names. Must never crash, hang or read outside its buffers.
#include <cstdint>
#include <span>
#include <string>

#include "pfstream/trace_formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  std::unique_ptr<pf::TraceFormats> formats = pf::TraceFormats::Parse(in);
  if (!formats) return 0;
  std::span<const uint8_t> raw = in.subspan(size > 256 ? size - 256 : 0);
  std::string out;
  for (uint64_t id = 0; id < 2048; ++id) {
    if (formats->Name(id).empty()) continue;
    formats->Print(id, 0, raw, &out);
    formats->Print(id, 1, raw.subspan(0, raw.size() / 2), &out);
  }
  return 0;
}
