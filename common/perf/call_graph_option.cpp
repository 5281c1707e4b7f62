#include "perf/call_graph_option.h"

#include <charconv>
#include <optional>

#include "base/error.h"

namespace pf {

namespace {

/// "fp", "none", "dwarf" or "dwarf,STACK_BYTES" into the mode and the stack copy's size.
CallChainMode ParseMode(const std::string& mode, uint32_t* stack_bytes) {
  if (mode == "fp") return CallChainMode::kFramePointer;
  if (mode == "none") return CallChainMode::kNone;
  if (mode != "dwarf" && mode.rfind("dwarf,", 0) != 0) {
    throw UsageError("--call-graph must be fp, dwarf[,STACK_BYTES] or none, not '" + mode + "'");
  }
  if (mode.size() > 6) {
    std::string size = mode.substr(6);
    uint64_t v = 0;
    auto r = std::from_chars(size.data(), size.data() + size.size(), v);
    if (r.ec != std::errc() || r.ptr != size.data() + size.size() || v == 0 || v % 8 != 0 ||
        v > kMaxStackBytes) {
      throw UsageError("--call-graph=dwarf,STACK_BYTES: '" + size +
                       "' is not a multiple of 8 from 8 to " + std::to_string(kMaxStackBytes));
    }
    *stack_bytes = static_cast<uint32_t>(v);
  }
  return CallChainMode::kDwarf;
}

}  // namespace

void ApplyCallGraphOptions(const std::vector<CallGraphOption>& options, RecordOptions* o) {
  std::optional<CallChainMode> mode;  // unset: nothing said yet
  for (const CallGraphOption& opt : options) {
    switch (opt.kind) {
      case CallGraphOption::kG:
        if (!mode || *mode == CallChainMode::kNone) mode = CallChainMode::kFramePointer;
        break;
      case CallGraphOption::kMode:
        mode = ParseMode(opt.mode, &o->stack_bytes);
        break;
      case CallGraphOption::kNone:
        mode = CallChainMode::kNone;
        break;
    }
  }
  o->call_graph = mode.value_or(CallChainMode::kFramePointer);
}

}  // namespace pf
