// Fuzz target: pprof profile.proto, sniffed, decoded and built into a tree (with label
// frames), as pf-collapse reads it but without the symbolizer (no files opened); then with
// --srcline's frames (function:file:line), whose tree must hold the same totals. Must never
// crash, hang or leak: bad input ends in a pf::Error. A tree built must add up: each
// column's total is the sum of the non-negative values of its sample type.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "collapse/pprof_read.h"
#include "formats/pprof.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)pf::LooksLikePprof(bytes);
  try {
    pf::PprofProfile p = pf::DecodePprof(bytes, "fuzz");
    pf::ReadReport report;
    pf::StackTree tree = pf::PprofTree(p, "fuzz", {"worker", "bytes"}, nullptr, &report);
    if (tree.saturated() == 0 && !p.sample_types.empty()) {
      // The last column is pprof's default sample type (or the last one).
      int def = static_cast<int>(p.sample_types.size()) - 1;
      for (size_t i = 0; i < p.sample_types.size(); ++i) {
        if (!p.default_sample_type.empty() && p.sample_types[i].type == p.default_sample_type) {
          def = static_cast<int>(i);
        }
      }
      uint64_t sum = 0;
      bool overflow = false;
      for (const pf::PprofProfile::Sample& s : p.samples) {
        int64_t v = p.values[s.first_value + def];
        if (v > 0) overflow |= __builtin_add_overflow(sum, static_cast<uint64_t>(v), &sum);
      }
      const bool scaled = tree.unit(tree.columns() - 1) == pf::WeightUnit::kNanoseconds &&
                          p.sample_types[def].unit != "nanoseconds";
      if (!overflow && !scaled && tree.Total(tree.columns() - 1) != sum) std::abort();
    }
    pf::ReadReport lines_report;
    pf::StackTree lines = pf::PprofTree(p, "fuzz", {}, nullptr, &lines_report, true, true);
    for (int c = 0; c < tree.columns(); ++c) {
      if (lines.Total(c) != tree.Total(c)) std::abort();
    }
  } catch (const pf::Error&) {
  }
  return 0;
}
