// Fuzz target: the .cpuprofile reader (and with it the JSON reader) and its sniffing. Must
// never crash, hang or leak: bad JSON, nodes that are no tree, lying sample ids are errors
// or counted warnings.
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "formats/cpuprofile.h"
#include "formats/json.h"
#include "io/input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pf::LooksLikeCpuProfile(text);
  try {
    auto in = pf::MemoryInput(text, "fuzz");
    pf::ReadReport report;
    pf::ReadCpuProfile(*in, &report);
  } catch (const pf::Error&) {
  }
  try {
    pf::JsonReader json(text, "fuzz");
    json.Skip();
    json.End();
  } catch (const pf::Error&) {
  }
  return 0;
}
