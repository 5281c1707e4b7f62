#include <cairo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "base/error.h"
#include "io/output.h"
#include "render/cairo_render.h"
#include "render/layout.h"
#include "render/text_measure.h"
#include "test_util.h"

// Fontconfig parses its configuration once per process and keeps it (and Cairo keeps a few
// fontconfig patterns in its font caches) until exit: a bounded, one-time allocation that
// LeakSanitizer reports as a leak in sanitized builds (PF_SANITIZE=address). Ignore it.
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig.so\n"; }

namespace pf {
namespace {

// ---------------------------------------------------------------------------------------------
// TextMeasurer

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

TEST(TextMeasurer, WidthsArePositiveAndFollowTheGlyphs) {
  TextMeasurer m("Verdana", 12);
  EXPECT_EQ(m.Width(""), 0);
  EXPECT_GT(m.Width("a"), 0);
  EXPECT_LT(m.Width("iii"), m.Width("WWW"));  // proportional (falls back to DejaVu Sans here)
  EXPECT_LT(m.Width("main"), m.Width("main_loop"));
  // Sums of advances: additive, and a non-ASCII character is measured once and cached.
  EXPECT_DOUBLE_EQ(m.Width("foo") + m.Width("::bar"), m.Width("foo::bar"));
  EXPECT_DOUBLE_EQ(m.Width("\xC3\xA9t\xC3\xA9"), 2 * m.Width("\xC3\xA9") + m.Width("t"));
  // Width scales with the size (unhinted metrics).
  TextMeasurer big("Verdana", 24);
  EXPECT_NEAR(big.Width("hello world"), 2 * m.Width("hello world"), 0.01);
}

TEST(TextMeasurer, MonospaceAndMissingFamilies) {
  TextMeasurer mono("monospace", 12);
  EXPECT_DOUBLE_EQ(mono.Width("iii"), mono.Width("WWW"));
  // An unknown family silently falls back to fontconfig's default.
  TextMeasurer missing("NoSuchFontXYZ", 12);
  EXPECT_GT(missing.Width("hello"), 0);
  TextMeasurer empty("", 12);
  EXPECT_GT(empty.Width("hello"), 0);
  TextMeasurer broken("Bad\xFF-Family", 12);
  EXPECT_GT(broken.Width("hello"), 0);
  EXPECT_THROW(TextMeasurer("monospace", 0), Error);
  EXPECT_THROW(TextMeasurer("monospace", -3), Error);
}

TEST(TextMeasurer, InvalidUtf8CountsAsReplacementCharacters) {
  TextMeasurer m("sans-serif", 12);
  double replacement = m.Width("\xEF\xBF\xBD");  // U+FFFD
  EXPECT_GT(replacement, 0);
  EXPECT_DOUBLE_EQ(m.Width("\xFF"), replacement);
  EXPECT_DOUBLE_EQ(m.Width("\xC3"), replacement);              // truncated sequence
  EXPECT_DOUBLE_EQ(m.Width("\xE2\x82"), 2 * replacement);      // one per byte
  EXPECT_DOUBLE_EQ(m.Width("\xC0\x80"), 2 * replacement);      // overlong
  EXPECT_DOUBLE_EQ(m.Width("\xED\xA0\x80"), 3 * replacement);  // surrogate
  EXPECT_DOUBLE_EQ(m.Width("\xEF\xBF\xBF"), replacement);      // noncharacter: one
  EXPECT_DOUBLE_EQ(m.Width(std::string_view("a\0b", 3)), m.Width("ab") + replacement);
  // Cairo refuses such strings and then stays in an error state: measuring must go on working.
  EXPECT_GT(m.Width("still fine"), 0);
  EXPECT_DOUBLE_EQ(m.Width("x\xFFy"), m.Width("xy") + replacement);
}

TEST(TextMeasurer, FitPrefixKeepsWholeCharacters) {
  TextMeasurer m("Verdana", 12);
  const std::string text =
      "caf\xC3\xA9::r\xC3\xA9sum\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80 \xFF end";
  double full = m.Width(text);
  EXPECT_EQ(m.FitPrefix(text, full), text.size());
  EXPECT_EQ(m.FitPrefix(text, full + 100), text.size());
  EXPECT_EQ(m.FitPrefix(text, 0), 0u);
  EXPECT_EQ(m.FitPrefix(text, m.Width("..")), 0u);  // room for the suffix only
  EXPECT_EQ(m.FitPrefix(text, -5), 0u);
  EXPECT_EQ(m.FitPrefix("", 0), 0u);
  size_t previous = 0;
  for (double w = 0; w < full; w += 0.5) {
    size_t n = m.FitPrefix(text, w);
    ASSERT_LT(n, text.size()) << w;
    EXPECT_FALSE(IsContinuationByte(text[n])) << "split at byte " << n;
    if (n > 0) {  // a truncated label carries the suffix
      EXPECT_LE(m.Width(std::string_view(text).substr(0, n)) + m.Width(".."), w);
    }
    EXPECT_GE(n, previous);  // monotone in the width
    previous = n;
  }
  // The prefix is the longest: one more character would overflow.
  size_t n = m.FitPrefix(text, 60);
  EXPECT_GT(m.Width(std::string_view(text).substr(0, n + 1)) + m.Width(".."), 60);
  // Another suffix, or none.
  EXPECT_EQ(m.FitPrefix("abcdef", m.Width("abc"), ""), 3u);
  EXPECT_EQ(m.FitPrefix("abcdef", m.Width("abc") + m.Width("..."), "..."), 3u);
}

TEST(CairoSafeUtf8, RepairsOnlyWhatCairoRefuses) {
  std::string scratch;
  std::string good = "main \xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80";
  EXPECT_EQ(CairoSafeUtf8(good, &scratch), good.c_str());  // no copy
  EXPECT_STREQ(CairoSafeUtf8("a\xFFz", &scratch), "a\xEF\xBF\xBDz");
  EXPECT_STREQ(CairoSafeUtf8(std::string("a\0z", 3), &scratch), "a\xEF\xBF\xBDz");
  EXPECT_STREQ(CairoSafeUtf8("\xEF\xB7\x90x\xE2\x82", &scratch),
               "\xEF\xBF\xBDx\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_STREQ(CairoSafeUtf8("\xF4\x90\x80\x80", &scratch),  // past U+10FFFF
               "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

// ---------------------------------------------------------------------------------------------
// RenderImage

// 400 x 160: root "all" across the bottom, two children, a narrow grandchild with a label too
// long for it (clipped), and one unlabelled box for the colour checks.
FlameLayout SmallLayout() {
  FlameLayout l;
  l.width = 400;
  l.height = 160;
  l.fonttype = "Verdana";
  l.title = "Flame Graph";
  l.subtitle = "pf test";
  l.total = 1000;
  auto add = [&](std::string name, std::string label, double x, double y, double w, Rgb fill) {
    FrameBox f;
    f.name = name;
    f.title = name;
    f.label = std::move(label);
    f.x = x, f.y = y, f.w = w, f.h = 15;
    f.fill = fill;
    l.frames.push_back(std::move(f));
  };
  add("all", "all", 10, 110, 380, Rgb{0xe0, 0x60, 0x20});
  add("main", "main", 10, 94, 250, Rgb{0xd0, 0xa0, 0x10});
  add("idle", "", 260, 94, 130, Rgb{0x20, 0x80, 0xd0});
  add("a_very_long_function_name", "WWWWWWWWWWWWWWWWWWWW", 10, 78, 40, Rgb{0x30, 0xc0, 0x30});
  return l;
}

// A decoded image, with pixel access.
class Image {
 public:
  explicit Image(cairo_surface_t* s) : surface_(s) {}
  ~Image() { cairo_surface_destroy(surface_); }
  bool ok() const { return cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(surface_); }
  int height() const { return cairo_image_surface_get_height(surface_); }
  Rgb At(int x, int y) const {
    cairo_surface_flush(surface_);
    const unsigned char* row =
        cairo_image_surface_get_data(surface_) + y * cairo_image_surface_get_stride(surface_);
    uint32_t px = reinterpret_cast<const uint32_t*>(row)[x];  // native-endian xRGB
    return Rgb{static_cast<uint8_t>(px >> 16), static_cast<uint8_t>(px >> 8),
               static_cast<uint8_t>(px)};
  }
  // True when some pixel in [x0, x1) x [y0, y1) is darker than `limit` (sum of R, G, B).
  bool AnyDark(int x0, int y0, int x1, int y1, int limit = 200) const {
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        Rgb c = At(x, y);
        if (c.r + c.g + c.b < limit) return true;
      }
    }
    return false;
  }

 private:
  cairo_surface_t* surface_;
};

struct PngReader {
  std::string_view data;
  static cairo_status_t Read(void* closure, unsigned char* out, unsigned int length) {
    auto* self = static_cast<PngReader*>(closure);
    if (self->data.size() < length) return CAIRO_STATUS_READ_ERROR;
    std::memcpy(out, self->data.data(), length);
    self->data.remove_prefix(length);
    return CAIRO_STATUS_SUCCESS;
  }
};

Image DecodePng(std::string_view png) {
  PngReader reader{png};
  return Image(cairo_image_surface_create_from_png_stream(&PngReader::Read, &reader));
}

bool Near(Rgb a, Rgb b, int tolerance = 2) {
  return std::abs(a.r - b.r) <= tolerance && std::abs(a.g - b.g) <= tolerance &&
         std::abs(a.b - b.b) <= tolerance;
}

::testing::AssertionResult ColourIs(const Image& image, int x, int y, Rgb want, int tolerance = 2) {
  Rgb got = image.At(x, y);
  if (Near(got, want, tolerance)) return ::testing::AssertionSuccess();
  char buf[100];
  std::snprintf(buf, sizeof buf, "pixel (%d,%d) is #%02x%02x%02x, want #%02x%02x%02x", x, y, got.r,
                got.g, got.b, want.r, want.g, want.b);
  return ::testing::AssertionFailure() << buf;
}

// Checks what SmallLayout() must look like, in a decoded image.
void CheckSmallLayoutPixels(const Image& image, int tolerance) {
  FlameLayout l = SmallLayout();
  ASSERT_EQ(image.width(), 400);
  ASSERT_EQ(image.height(), 160);
  // The unlabelled frame's fill at its centre and near its corners.
  EXPECT_TRUE(ColourIs(image, 325, 101, l.frames[2].fill, tolerance));
  EXPECT_TRUE(ColourIs(image, 263, 97, l.frames[2].fill, tolerance));
  // Labelled frames: fill where the text is not, text (dark pixels) inside the box.
  EXPECT_TRUE(ColourIs(image, 380, 118, l.frames[0].fill, tolerance));
  EXPECT_TRUE(ColourIs(image, 250, 101, l.frames[1].fill, tolerance));
  EXPECT_TRUE(image.AnyDark(10, 110, 40, 125));  // "all"
  EXPECT_TRUE(image.AnyDark(10, 94, 50, 109));   // "main"
  // The long label is clipped to its 40-pixel box: nothing dark right of it on that row.
  EXPECT_TRUE(image.AnyDark(10, 78, 50, 93));
  EXPECT_FALSE(image.AnyDark(51, 76, 400, 94));
  // Background: the gradient's end colours above 5% and below 95% of the height, where there
  // is no text (title and subtitle are centred, the legend is at the bottom left).
  EXPECT_TRUE(ColourIs(image, 396, 3, l.bg_top, tolerance));
  EXPECT_TRUE(ColourIs(image, 396, 158, l.bg_bottom, tolerance));
  // The title is drawn, centred, near y = 24.
  EXPECT_TRUE(image.AnyDark(150, 10, 250, 30));
  EXPECT_FALSE(image.AnyDark(0, 10, 100, 30));
  // The legend (grey), bottom left.
  EXPECT_TRUE(image.AnyDark(10, 140, 100, 155, 400));
}

TEST(RenderImage, PngHasTheLayoutsSizeAndPixels) {
  StringSink out;
  RenderImage(SmallLayout(), ImageFormat::kPng, out);
  ASSERT_GT(out.data().size(), 8u);
  EXPECT_EQ(out.data().substr(0, 8), "\x89PNG\r\n\x1a\n");
  Image image = DecodePng(out.data());
  ASSERT_TRUE(image.ok());
  CheckSmallLayoutPixels(image, 0);  // fills are exact in Cairo's own rasterizer
}

TEST(RenderImage, PngRoundsTheSizeUpAndDrawsAnEmptyLayout) {
  FlameLayout l;
  l.width = 120.4;
  l.height = 50.2;
  l.title = "nothing here";
  StringSink out;
  RenderImage(l, ImageFormat::kPng, out);
  Image image = DecodePng(out.data());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image.width(), 121);
  EXPECT_EQ(image.height(), 51);
  EXPECT_TRUE(image.AnyDark(0, 0, 121, 30));  // the title
}

TEST(RenderImage, BadTextDoesNotBreakCairo) {
  // Invalid UTF-8, NULs and noncharacters everywhere Cairo sees text.
  FlameLayout l = SmallLayout();
  l.title = "bad \xFF title";
  l.subtitle = std::string("nul\0inside", 10);
  l.fonttype = "Ver\xC3-dana";
  l.countname = "\xEF\xBF\xBF";
  l.frames[1].label = "ma\xE2\x82in";
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kPdf}) {
    StringSink out;
    EXPECT_NO_THROW(RenderImage(l, format, out));
    EXPECT_FALSE(out.data().empty());
  }
}

TEST(RenderImage, RefusesSizesItCannotDraw) {
  FlameLayout l = SmallLayout();
  StringSink out;
  l.height = 40000;
  EXPECT_THROW(RenderImage(l, ImageFormat::kPng, out), Error);
  l.height = 0;
  EXPECT_THROW(RenderImage(l, ImageFormat::kPng, out), Error);
  EXPECT_THROW(RenderImage(l, ImageFormat::kPdf, out), Error);
  l.height = std::nan("");
  EXPECT_THROW(RenderImage(l, ImageFormat::kPng, out), Error);
  EXPECT_TRUE(out.data().empty());
  try {
    l.width = 30000;
    l.height = 30000;
    RenderImage(l, ImageFormat::kPng, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot render PNG"), std::string::npos) << e.what();
  }
}

// A sink that fails after some bytes.
class FailingSink : public ByteSink {
 public:
  explicit FailingSink(bool pipe) : pipe_(pipe) {}
  void WriteAll(std::string_view) override {
    if (pipe_) throw PipeClosed();
    throw Error("out.png", "cannot write: No space left on device");
  }

 private:
  bool pipe_;
};

TEST(RenderImage, SinkErrorsPassThroughCairo) {
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kPdf}) {
    FailingSink closed(true);
    EXPECT_THROW(RenderImage(SmallLayout(), format, closed), PipeClosed);
    FailingSink full(false);
    try {
      RenderImage(SmallLayout(), format, full);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "out.png");
    }
  }
}

TEST(RenderImage, SinkErrorsInsideCairosCallbackPassThrough) {
  // Output past the 64 KiB buffer reaches the sink from inside Cairo's write callback: draw
  // 30,000 one-pixel frames of pseudo-random colours, which compress badly in both formats.
  FlameLayout l = SmallLayout();
  l.frames.resize(1);
  uint32_t seed = 1;
  for (int i = 0; i < 30000; ++i) {
    FrameBox& f = l.frames.emplace_back();
    f.x = 10 + i % 380;
    f.y = 30 + i / 380;
    f.w = f.h = 1;
    seed = seed * 1664525 + 1013904223;
    f.fill = Rgb{static_cast<uint8_t>(seed >> 24), static_cast<uint8_t>(seed >> 16),
                 static_cast<uint8_t>(seed >> 8)};
  }
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kPdf}) {
    StringSink ok;
    RenderImage(l, format, ok);
    ASSERT_GT(ok.data().size(), 64u << 10);
    FailingSink closed(true);
    EXPECT_THROW(RenderImage(l, format, closed), PipeClosed);
    FailingSink full(false);
    EXPECT_THROW(RenderImage(l, format, full), Error);
  }
}

TEST(RenderImage, PdfIsAPdf) {
  FlameLayout l = SmallLayout();
  l.differential = true;
  StringSink out;
  RenderImage(l, ImageFormat::kPdf, out);
  const std::string& pdf = out.data();
  ASSERT_GT(pdf.size(), 100u);
  EXPECT_EQ(pdf.substr(0, 5), "%PDF-");
  EXPECT_NE(pdf.find("%%EOF", pdf.size() - 16), std::string::npos);
  EXPECT_NE(pdf.find("/Count 1"), std::string::npos);  // one page
}

TEST(RenderImage, OutputIsReproducible) {
  // PNG always; PDF when SOURCE_DATE_EPOCH fixes its creation date.
  StringSink a, b;
  RenderImage(SmallLayout(), ImageFormat::kPng, a);
  RenderImage(SmallLayout(), ImageFormat::kPng, b);
  EXPECT_EQ(a.data(), b.data());

  const char* old = std::getenv("SOURCE_DATE_EPOCH");
  std::string saved = old ? old : "";
  setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  StringSink c, d;
  RenderImage(SmallLayout(), ImageFormat::kPdf, c);
  RenderImage(SmallLayout(), ImageFormat::kPdf, d);
  if (old) {
    setenv("SOURCE_DATE_EPOCH", saved.c_str(), 1);
  } else {
    unsetenv("SOURCE_DATE_EPOCH");
  }
  EXPECT_EQ(c.data(), d.data());
  // The date is SOURCE_DATE_EPOCH's, not the clock's. Cairo 1.16 writes "(20231114221320Z)",
  // later versions "(D:20231114221320Z)".
  EXPECT_NE(c.data().find("20231114221320Z)"), std::string::npos);
}

TEST(RenderImage, PdfRasterizesToTheSamePicture) {
  if (std::system("command -v pdftoppm >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "pdftoppm (poppler-utils) is not installed";
  }
  StringSink out;
  RenderImage(SmallLayout(), ImageFormat::kPdf, out);
  std::string dir = ::testing::TempDir() + "pf_render_test_" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  {
    std::ofstream pdf(dir + "/in.pdf", std::ios::binary);
    pdf << out.data();
  }
  std::string command =
      "pdftoppm -png -r 72 -singlefile '" + dir + "/in.pdf' '" + dir + "/out' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  Image image = DecodePng(test::ReadFile(dir + "/out.png"));
  std::system(("rm -rf '" + dir + "'").c_str());
  ASSERT_TRUE(image.ok());
  CheckSmallLayoutPixels(image, 3);  // poppler's rasterizer, not Cairo's: allow rounding
}

}  // namespace
}  // namespace pf
