#pragma once
// --nameattr: extra SVG attributes per function, from a file in flamegraph.pl's format: one
// line per function, its name (as in the folded input, annotation included), a tab, and
// tab-separated KEY=VALUE pairs. Keys: title (replaces the tooltip), id, class, href (the
// frame becomes a link: <a xlink:href> in place of <g>), target (default _top), g_extra and
// a_extra (more attributes, written NAME="VALUE" ..., for the group and the link).
//
// flamegraph.pl pastes these into the SVG as they are; we parse the extra attributes (as
// inferno does) and escape every value, so the SVG stays well-formed, and leave out event
// handlers (on...) and javascript: links, so --nameattr cannot add script either.

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pf {

struct FrameAttrs {
  bool has_title = false;
  std::string title;
  bool link = false;  // href given: an <a> with link_attrs, then group_attrs
  std::vector<std::pair<std::string, std::string>> link_attrs;   // xlink:href, target, a_extra
  std::vector<std::pair<std::string, std::string>> group_attrs;  // id, class, g_extra
};

/// Reads a --nameattr file. Throws pf::Error naming FILE:LINE for a line that is not
/// NAME<tab>KEY=VALUE...; what is ignored (unknown keys, unsafe attributes, malformed
/// extras) is said in `warnings`.
std::unordered_map<std::string, FrameAttrs> ReadNameAttrs(const std::string& path,
                                                          std::vector<std::string>* warnings);

}  // namespace pf
