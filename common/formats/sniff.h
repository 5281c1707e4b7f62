#pragma once
// Recognising an input's format from its first bytes, so no reader guesses silently.

#include <string>
#include <string_view>

namespace pf {

enum class InputFormat { kEmpty, kPerfScript, kFolded, kPerfData, kBinary };

/// The format of an input whose first (decompressed) bytes are `head`.
InputFormat SniffFormat(std::string_view head);

const char* FormatName(InputFormat f);

}  // namespace pf
