#pragma once
// Rendering DOT text through Graphviz's library (libgvc), when pf was built with it.

#include <string>
#include <string_view>

namespace pf {

/// True when this build links libgvc, so RenderDot works.
bool GraphvizAvailable();

/// Lays out `dot` with the dot engine and renders it as `format` ("svg", "png" or "pdf").
/// Throws pf::Error when Graphviz refuses the graph or lacks the renderer, and when this
/// build has no Graphviz.
std::string RenderDot(std::string_view dot, const std::string& format);

}  // namespace pf
