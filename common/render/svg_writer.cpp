// The flame graph's SVG (svg_writer.h). The document is written in one pass over the layout:
// the header with the embedded JavaScript and CSS (share/, compiled in), then one <g> per frame
// with its title, rectangle and label, every text XML-escaped. Labels are shortened to what
// fits the frame's width as measured by text_measure.h, and numbers are printed with fixed
// formats, so the output is byte-for-byte deterministic.

#include "render/svg_writer.h"

#include <cctype>
#include <cstdio>

#include "base/utf8.h"
#include "base/version.h"
#include "render/palette.h"
#include "stacks/weight.h"

namespace pf {

extern const char kFlamegraphJs[];
extern const size_t kFlamegraphJsSize;
extern const char kFlamegraphCss[];
extern const size_t kFlamegraphCssSize;

namespace {

// Calls f(code_point, bytes) for each UTF-8 character; invalid sequences give U+FFFD.
template <typename F>
void Utf8Walk(std::string_view s, F&& f) {
  for (size_t i = 0; i < s.size();) {
    Utf8Char c = DecodeUtf8(s, i);
    f(c.valid ? static_cast<uint32_t>(c.cp) : 0xfffd, s.substr(i, c.len));
    i += c.len;
  }
}

// Characters XML 1.0 allows.
bool XmlAllowed(uint32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

constexpr std::string_view kReplacement = "\xef\xbf\xbd";

}  // namespace

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  Utf8Walk(s, [&](uint32_t cp, std::string_view bytes) {
    if (!XmlAllowed(cp) || cp == 0xfffd) {
      out += "\\ufffd";
    } else if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 ||
               cp == 0x2029) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else {
      out.append(bytes);
    }
  });
  return out + "\"";
}

namespace {

// A CSS string for font-family; generic families stay bare.
std::string CssFontFamily(std::string_view f) {
  for (std::string_view g : {"serif", "sans-serif", "monospace", "cursive", "fantasy",
                             "system-ui"}) {
    if (f == g) return std::string(f);
  }
  std::string out = "\"";
  Utf8Walk(f, [&](uint32_t cp, std::string_view bytes) {
    if (!XmlAllowed(cp) || cp < 0x20 || cp == 0xfffd) return;
    if (cp == '"' || cp == '\\' || cp == '<' || cp == '>' || cp == '&') {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\%x ", cp);
      out += buf;
    } else {
      out.append(bytes);
    }
  });
  return out + "\", sans-serif";
}

// Text for an XML comment: no "--", no trailing '-'.
std::string CommentText(std::string_view s) {
  std::string out;
  Utf8Walk(s, [&](uint32_t cp, std::string_view bytes) {
    if (!XmlAllowed(cp) || cp == 0xfffd) {
      out += kReplacement;
    } else if (cp == '-' && !out.empty() && out.back() == '-') {
      out += " -";
    } else {
      out.append(bytes);
    }
  });
  if (!out.empty() && out.back() == '-') out += ' ';
  return out;
}

std::string Num(const char* fmt, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  Utf8Walk(s, [&](uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&#39;"; return;
      default: break;
    }
    if (!XmlAllowed(cp) || cp == 0xfffd) {
      out += kReplacement;
    } else {
      out.append(bytes);
    }
  });
  return out;
}

bool IsXmlEncodingName(std::string_view name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

void WriteSvg(const FlameLayout& L, const FlameOptions& o, BufferedWriter& w) {
  const std::string width = Num("%.0f", L.width), height = Num("%.0f", L.height);
  const double fs = L.fontsize;
  // --encoding labels the bytes (always UTF-8) as flamegraph.pl does; main checks the name.
  const std::string enc = o.encoding.empty() ? "" : " encoding=\"" + XmlEscape(o.encoding) + "\"";
  w.Append("<?xml version=\"1.0\"" + enc + " standalone=\"no\"?>\n");
  w.Append("<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
           "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
  w.Append("<svg version=\"1.1\" width=\"" + width + "\" height=\"" + height +
           "\" onload=\"init(evt)\" viewBox=\"0 0 " + width + " " + height +
           "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\""
           " xmlns:fg=\"http://pf.invalid/flamegraph\">\n");
  w.Append(std::string("<!-- Flame graph drawn by pf-flamegraph ") + kVersion +
           ". Open it in a browser: hover for details, click to zoom, Ctrl-F to search. -->\n");
  w.Append("<!-- NOTES: " + CommentText(o.notes) + " -->\n");
  w.Append("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
           "<stop stop-color=\"" + RgbText(L.bg_top) + "\" offset=\"5%\"/>"
           "<stop stop-color=\"" + RgbText(L.bg_bottom) + "\" offset=\"95%\"/>"
           "</linearGradient></defs>\n");
  w.Append("<style type=\"text/css\"><![CDATA[\n");
  w.Append(std::string_view(kFlamegraphCss, kFlamegraphCssSize));
  w.Append("\ntext { font-family: " + CssFontFamily(L.fonttype) + "; font-size: " +
           Num("%g", fs) + "px; }\n#title { font-size: " + Num("%g", fs + 5) + "px; }\n]]></style>\n");
  w.Append("<script type=\"text/ecmascript\"><![CDATA[\nvar fg_config = {\"nametype\":" +
           JsonString(o.nametype) + ",\"countname\":" + JsonString(L.countname) +
           ",\"fontsize\":" + Num("%g", fs) + ",\"xpad\":" + Num("%g", L.xpad) +
           ",\"width\":" + width + ",\"frameheight\":" + Num("%g", o.frameheight) +
           ",\"inverted\":" + (L.inverted ? "true" : "false") +
           ",\"searchcolor\":" + JsonString(o.search_color) +
           ",\"total\":" + std::to_string(L.total) + ",\"factor\":" + Num("%g", o.factor) +
           "};\n");
  w.Append(std::string_view(kFlamegraphJs, kFlamegraphJsSize));
  w.Append("\n]]></script>\n");
  w.Append("<rect x=\"0\" y=\"0\" width=\"" + width + "\" height=\"" + height +
           "\" fill=\"url(#background)\"/>\n");
  const std::string mid = Num("%.2f", static_cast<double>(static_cast<long>(L.width / 2)));
  const std::string bottom = Num("%g", L.height - (fs * 2 + 10) / 2);
  w.Append("<text id=\"title\" x=\"" + mid + "\" y=\"" + Num("%g", fs * 2) + "\">" +
           XmlEscape(L.title) + "</text>\n");
  if (!L.subtitle.empty()) {
    w.Append("<text id=\"subtitle\" x=\"" + mid + "\" y=\"" + Num("%g", fs * 4) + "\">" +
             XmlEscape(L.subtitle) + "</text>\n");
  }
  w.Append("<text id=\"details\" x=\"" + Num("%.2f", L.xpad) + "\" y=\"" + bottom +
           "\"> </text>\n");
  w.Append("<text id=\"unzoom\" x=\"" + Num("%.2f", L.xpad) + "\" y=\"" + Num("%g", fs * 2) +
           "\" class=\"hide\">Reset Zoom</text>\n");
  w.Append("<text id=\"search\" x=\"" + Num("%.2f", L.width - L.xpad - 100) + "\" y=\"" +
           Num("%g", fs * 2) + "\">Search</text>\n");
  w.Append("<text id=\"ignorecase\" x=\"" + Num("%.2f", L.width - L.xpad - 16) + "\" y=\"" +
           Num("%g", fs * 2) + "\">ic</text>\n");
  w.Append("<text id=\"matched\" x=\"" + Num("%.2f", L.width - L.xpad) + "\" y=\"" +
           bottom + "\"> </text>\n");
  w.Append("<g id=\"frames\" fg:total=\"" + std::to_string(L.total) + "\">\n");
  std::string line;
  for (const FrameBox& b : L.frames) {
    line.clear();
    const FrameAttrs* fa = b.attrs >= 0 ? &L.attrs[static_cast<size_t>(b.attrs)] : nullptr;
    if (!fa) {
      line += "<g>";
    } else {  // --nameattr: as flamegraph.pl, a link's attributes first, then the group's
      line += fa->link ? "<a" : "<g";
      for (const auto* attrs : {&fa->link_attrs, &fa->group_attrs}) {
        if (attrs == &fa->link_attrs && !fa->link) continue;
        for (const auto& [n, v] : *attrs) line += " " + n + "=\"" + XmlEscape(v) + "\"";
      }
      line += ">";
    }
    line += "<title>";
    line += XmlEscape(fa && fa->has_title ? fa->title : b.title);
    line += "</title><rect x=\"";
    double x2 = b.x + b.w;
    std::string x1s = Fixed(b.x, 1), x2s = Fixed(x2, 1);
    line += x1s;
    line += "\" y=\"";
    AppendFixed(&line, b.y, 1);
    line += "\" width=\"";
    AppendFixed(&line, std::strtod(x2s.c_str(), nullptr) - std::strtod(x1s.c_str(), nullptr), 1);
    line += "\" height=\"";
    AppendFixed(&line, b.h, 1);
    line += "\" fill=\"";
    line += RgbText(b.fill);
    line += "\" rx=\"2\" ry=\"2\" fg:x=\"";
    line += std::to_string(b.start);
    line += "\" fg:w=\"";
    line += std::to_string(b.count);
    line += "\" fg:tw=\"";
    AppendFixed(&line, b.text_width, 2);
    line += "\"/><text x=\"";
    AppendFixed(&line, b.x + 3, 2);
    line += "\" y=\"";
    AppendFixed(&line, b.y + b.h / 2 + 3, 1);
    line += "\">";
    line += XmlEscape(b.label);
    line += fa && fa->link ? "</text></a>\n" : "</text></g>\n";
    w.Append(line);
  }
  w.Append("</g>\n</svg>\n");
}

}  // namespace pf
