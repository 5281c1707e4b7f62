#pragma once
// The interactive SVG: flamegraph.pl's document shape (ids title, details, unzoom, search,
// ignorecase, matched; one <g> per frame with its <title> first), plus exact counts as
// attributes (fg:x, fg:w: start and width in count units; fg:tw: the measured width of the
// name in pixels) so the browser code (share/flamegraph.js, embedded) never measures text.
// Every string from the input or the command line is escaped for where it goes: XML text,
// an XML attribute, a JSON string in the script, a CSS string, an XML comment. Characters
// XML cannot carry (control bytes, invalid UTF-8) become U+FFFD.

#include <string>
#include <string_view>

#include "io/output.h"
#include "render/flame.h"
#include "render/layout.h"

namespace pf {

void WriteSvg(const FlameLayout& layout, const FlameOptions& options, BufferedWriter& out);

/// `s` made safe as XML character data or attribute value (escapes &, <, >, ", ').
std::string XmlEscape(std::string_view s);

/// `s` as a JSON string literal that is safe inside a script element or a CDATA section:
/// no quote, backslash, control character, '<', '>' or '&' unescaped (so neither "]]>" nor
/// "</script" can appear); characters XML cannot carry and invalid UTF-8 become U+FFFD.
std::string JsonString(std::string_view s);

/// True when `name` can stand in an XML declaration's encoding="..." ([A-Za-z][A-Za-z0-9._-]*).
bool IsXmlEncodingName(std::string_view name);

}  // namespace pf
