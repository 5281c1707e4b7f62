// Draws a FlameLayout with Cairo: one image surface for PNG, one PDF surface for PDF, and the
// same drawing code for both (points = pixels, so a PDF page has the PNG's size).
//
// The picture follows flamegraph.pl: a vertical background gradient (stops at 5% and 95%),
// the title and subtitle centred at the top, each frame a filled rectangle with rounded
// corners and its pre-fitted label clipped to the box, plus a one-line legend at the bottom.
//
// Cairo reports errors as a sticky status on each object rather than failing calls, so the
// code draws everything, then checks the status once. Output goes through Cairo's C write
// callback: a C++ exception must not unwind through Cairo's frames, so the callback catches
// what the sink throws, tells Cairo the write failed, and RenderImage rethrows it afterwards
// (a PipeClosed stays a PipeClosed). The bytes are buffered because Cairo writes in many
// small pieces, and a file sink would otherwise make one write(2) per piece.
//
// Every string handed to Cairo goes through CairoSafeUtf8(): one frame name with invalid
// UTF-8 would otherwise put the context, and the shared scaled font, in an error state.
//
// A PDF carries a creation date, so two runs differ; SOURCE_DATE_EPOCH (the reproducible
// builds convention, https://reproducible-builds.org/specs/source-date-epoch/) fixes it.

#include "render/cairo_render.h"

#include <cairo-pdf.h>
#include <cairo.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <numbers>
#include <string>

#include "base/error.h"
#include "render/text_measure.h"
#include "stacks/weight.h"

namespace pf {

namespace {

// Cairo image surfaces (pixman) are limited to 32767 pixels per side. Beyond the side limit,
// cap the area too, so an absurd size fails with a message instead of exhausting memory:
// 2^28 pixels is 1 GiB of pixel data (e.g. 8192 x 32767).
constexpr double kMaxPngSide = 32767;
constexpr double kMaxPngPixels = double{1 << 28};
constexpr size_t kOutputBuffer = 64 << 10;

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};
struct PatternDeleter {
  void operator()(cairo_pattern_t* p) const { cairo_pattern_destroy(p); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;
using PatternPtr = std::unique_ptr<cairo_pattern_t, PatternDeleter>;

// The sink behind Cairo's write callback (see the file comment).
class CairoStream {
 public:
  explicit CairoStream(ByteSink& out) : writer_(out, kOutputBuffer) {}

  // A cairo_write_func_t; `closure` is the CairoStream.
  static cairo_status_t Write(void* closure, const unsigned char* data, unsigned int length) {
    auto* self = static_cast<CairoStream*>(closure);
    if (self->error_) return CAIRO_STATUS_WRITE_ERROR;
    try {
      self->writer_.Append(std::string_view(reinterpret_cast<const char*>(data), length));
    } catch (...) {
      self->error_ = std::current_exception();
      return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
  }

  // Rethrows what the sink threw, if anything. Call before looking at Cairo's status, whose
  // "error while writing to output stream" would hide the real cause.
  void RethrowSinkError() const {
    if (error_) std::rethrow_exception(error_);
  }

  void Flush() { writer_.Flush(); }

 private:
  BufferedWriter writer_;
  std::exception_ptr error_;
};

const char* FormatName(ImageFormat format) { return format == ImageFormat::kPng ? "PNG" : "PDF"; }

void CheckStatus(cairo_status_t status, ImageFormat format) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw Error(std::string("cannot render ") + FormatName(format) + ": " +
                cairo_status_to_string(status));
  }
}

void SetSource(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

// The image's size in whole pixels (PNG) or points (PDF).
struct PageSize {
  int width, height;
};

PageSize CheckedSize(const FlameLayout& layout, ImageFormat format) {
  double w = std::ceil(layout.width), h = std::ceil(layout.height);
  std::string prefix = std::string("cannot render ") + FormatName(format) + ": ";
  if (!(w >= 1 && h >= 1) || w > 1e9 || h > 1e9) {  // also NaN
    throw Error(prefix + "invalid image size " + std::to_string(layout.width) + " x " +
                std::to_string(layout.height));
  }
  if (format == ImageFormat::kPng &&
      (w > kMaxPngSide || h > kMaxPngSide || w * h > kMaxPngPixels)) {
    throw Error(prefix + "the image would be " + std::to_string(static_cast<int64_t>(w)) + " x " +
                std::to_string(static_cast<int64_t>(h)) +
                " pixels; PNG output is limited to 32767 pixels per side and 268 million "
                "pixels in all (draw SVG or PDF instead, or make the graph smaller)");
  }
  return {static_cast<int>(w), static_cast<int>(h)};
}

// Draws the whole picture; statuses are checked by the caller.
class Painter {
 public:
  Painter(cairo_t* cr, const FlameLayout& layout) : cr_(cr), layout_(layout) {}

  void Paint(PageSize size) {
    Background(size);
    // Unhinted metrics, as TextMeasurer measured the labels (see text_measure.h).
    cairo_font_options_t* options = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
    cairo_set_font_options(cr_, options);
    cairo_font_options_destroy(options);
    cairo_select_font_face(cr_, Safe(layout_.fonttype), CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);

    // Title and subtitle (flamegraph.pl: title 5 px larger, subtitle grey).
    cairo_set_font_size(cr_, layout_.fontsize + 5);
    cairo_set_source_rgb(cr_, 0, 0, 0);
    Centred(layout_.title, size.width / 2.0, layout_.fontsize * 2);
    if (!layout_.subtitle.empty()) {
      cairo_set_font_size(cr_, layout_.fontsize);
      SetSource(cr_, Rgb{160, 160, 160});
      Centred(layout_.subtitle, size.width / 2.0, layout_.fontsize * 4);
    }

    cairo_set_font_size(cr_, layout_.fontsize);
    for (const FrameBox& f : layout_.frames) Frame(f);

    Legend(size);
  }

 private:
  // NUL-terminated UTF-8 that Cairo accepts; valid until the next call.
  const char* Safe(const std::string& s) { return CairoSafeUtf8(s, &scratch_); }

  void Background(PageSize size) {
    PatternPtr gradient(cairo_pattern_create_linear(0, 0, 0, size.height));
    auto stop = [&](double offset, Rgb c) {
      cairo_pattern_add_color_stop_rgb(gradient.get(), offset, c.r / 255.0, c.g / 255.0,
                                       c.b / 255.0);
    };
    stop(0.05, layout_.bg_top);
    stop(0.95, layout_.bg_bottom);
    cairo_set_source(cr_, gradient.get());
    cairo_paint(cr_);
  }

  // Draws `text` with its advance centred on x (SVG's text-anchor="middle").
  void Centred(const std::string& text, double x, double baseline) {
    if (text.empty()) return;
    const char* s = Safe(text);
    cairo_text_extents_t extents;
    cairo_text_extents(cr_, s, &extents);
    cairo_move_to(cr_, x - extents.x_advance / 2, baseline);
    cairo_show_text(cr_, s);
  }

  void Frame(const FrameBox& f) {
    // Skip what cannot be drawn rather than feed Cairo NaNs.
    if (!(f.w > 0 && f.h > 0) || !std::isfinite(f.x + f.y + f.w + f.h)) return;
    SetSource(cr_, f.fill);
    if (f.w >= 4 && f.h >= 4) {
      RoundedRectangle(f.x, f.y, f.w, f.h, 2);  // flamegraph.pl's rx="2" ry="2"
    } else {
      cairo_rectangle(cr_, f.x, f.y, f.w, f.h);
    }
    cairo_fill(cr_);
    if (f.label.empty()) return;

    // The label was fitted with TextMeasurer, but clip anyway: glyphs may reach past their
    // advance, and a large font overflows the box vertically.
    cairo_save(cr_);
    cairo_rectangle(cr_, f.x, f.y, f.w, f.h);
    cairo_clip(cr_);
    cairo_set_source_rgb(cr_, 0, 0, 0);
    cairo_move_to(cr_, f.x + 3, f.y + f.h / 2 + 3);
    cairo_show_text(cr_, Safe(f.label));
    cairo_restore(cr_);
  }

  void RoundedRectangle(double x, double y, double w, double h, double r) {
    constexpr double kPi = std::numbers::pi;
    cairo_new_sub_path(cr_);
    cairo_arc(cr_, x + w - r, y + r, r, -kPi / 2, 0);
    cairo_arc(cr_, x + w - r, y + h - r, r, 0, kPi / 2);
    cairo_arc(cr_, x + r, y + h - r, r, kPi / 2, kPi);
    cairo_arc(cr_, x + r, y + r, r, kPi, 3 * kPi / 2);
    cairo_close_path(cr_);
  }

  // A static image has no tooltips, so say what the picture means in one line.
  void Legend(PageSize size) {
    const char* kDot = " \xC2\xB7 ";  // U+00B7 MIDDLE DOT
    std::string text = "pf-flamegraph";
    text += kDot;
    text += layout_.total_text.empty()
                ? WithThousands(std::to_string(layout_.total)) + " " + layout_.countname
                : layout_.total_text;
    text += kDot;
    text += "width = share of " + layout_.countname;
    if (layout_.differential) {
      text += kDot;
      text += "red = grew, blue = shrank";
    }
    cairo_set_font_size(cr_, layout_.fontsize);
    cairo_set_source_rgb(cr_, 0.3, 0.3, 0.3);
    cairo_move_to(cr_, layout_.xpad, size.height - 10);
    cairo_show_text(cr_, Safe(text));
  }

  cairo_t* cr_;
  const FlameLayout& layout_;
  std::string scratch_;  // CairoSafeUtf8's copy when a string needs repair; reused
};

void RenderPng(const FlameLayout& layout, ByteSink& out) {
  PageSize size = CheckedSize(layout, ImageFormat::kPng);
  // RGB24, not ARGB32: the background is opaque, and an RGB PNG is smaller and faster to
  // write than an RGBA one (Cairo also skips un-premultiplying every pixel).
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, size.width, size.height));
  CheckStatus(cairo_surface_status(surface.get()), ImageFormat::kPng);
  {
    ContextPtr cr(cairo_create(surface.get()));
    Painter(cr.get(), layout).Paint(size);
    CheckStatus(cairo_status(cr.get()), ImageFormat::kPng);
  }
  cairo_surface_flush(surface.get());

  CairoStream stream(out);
  cairo_status_t status =
      cairo_surface_write_to_png_stream(surface.get(), &CairoStream::Write, &stream);
  stream.RethrowSinkError();
  CheckStatus(status, ImageFormat::kPng);
  stream.Flush();
}

// SOURCE_DATE_EPOCH as an ISO 8601 UTC date for the PDF metadata, or "" when unset or bad.
std::string SourceDate() {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (env == nullptr || *env == '\0') return "";
  char* end = nullptr;
  long long seconds = std::strtoll(env, &end, 10);
  if (*end != '\0' || seconds < 0) return "";
  time_t t = static_cast<time_t>(seconds);
  struct tm tm;
  char buf[32];
  if (gmtime_r(&t, &tm) == nullptr || strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
    return "";
  }
  return buf;
}

void RenderPdf(const FlameLayout& layout, ByteSink& out) {
  PageSize size = CheckedSize(layout, ImageFormat::kPdf);
  // The PDF surface writes as it goes and at finish, so the stream must outlive it.
  CairoStream stream(out);
  SurfacePtr surface(
      cairo_pdf_surface_create_for_stream(&CairoStream::Write, &stream, size.width, size.height));
  CheckStatus(cairo_surface_status(surface.get()), ImageFormat::kPdf);
  std::string scratch;
  cairo_pdf_surface_set_metadata(surface.get(), CAIRO_PDF_METADATA_TITLE,
                                 CairoSafeUtf8(layout.title, &scratch));
  cairo_pdf_surface_set_metadata(surface.get(), CAIRO_PDF_METADATA_CREATOR, "pf-flamegraph");
  if (std::string date = SourceDate(); !date.empty()) {
    cairo_pdf_surface_set_metadata(surface.get(), CAIRO_PDF_METADATA_CREATE_DATE, date.c_str());
  }
  {
    ContextPtr cr(cairo_create(surface.get()));
    Painter(cr.get(), layout).Paint(size);
    cairo_show_page(cr.get());
    stream.RethrowSinkError();
    CheckStatus(cairo_status(cr.get()), ImageFormat::kPdf);
  }
  cairo_surface_finish(surface.get());  // writes the rest: fonts, xref, trailer
  stream.RethrowSinkError();
  CheckStatus(cairo_surface_status(surface.get()), ImageFormat::kPdf);
  stream.Flush();
}

}  // namespace

void RenderImage(const FlameLayout& layout, ImageFormat format, ByteSink& out) {
  if (format == ImageFormat::kPng) {
    RenderPng(layout, out);
  } else {
    RenderPdf(layout, out);
  }
}

}  // namespace pf
