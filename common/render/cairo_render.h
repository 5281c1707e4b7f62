#pragma once
// The render module (common/render/): flame graphs: the layout (flame.h, layout.h), colours
// (palette.h), text measurement, and the writers: SVG (svg_writer.h) and, through Cairo, PNG
// and PDF (this file).
//
// PNG and PDF flame graphs, drawn with Cairo from the same FlameLayout the SVG writer uses.

#include "io/output.h"
#include "render/layout.h"

namespace pf {

enum class ImageFormat { kPng, kPdf };

/// Draws `layout` with Cairo and writes the PNG or PDF bytes to `out`. Throws pf::Error when
/// Cairo fails or a PNG would be too large; what `out` throws (PipeClosed too) passes through.
void RenderImage(const FlameLayout& layout, ImageFormat format, ByteSink& out);

}  // namespace pf
