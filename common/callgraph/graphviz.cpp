// Laying out DOT with Graphviz's own library (graphviz.h), for pf-dot --format=svg/png/pdf:
// the text pf-dot would print is handed to agmemread, laid out with dot and rendered to
// memory, so the result is what `dot -Tsvg` gives without running a program. Compiled only
// when the build found libgvc.

#include "callgraph/graphviz.h"

#include "base/error.h"

#ifdef PF_HAVE_GVC
#include <cgraph.h>
#include <gvc.h>

#include <memory>
#endif

namespace pf {

#ifdef PF_HAVE_GVC

namespace {

struct ContextFree {
  void operator()(GVC_t* gvc) const { gvFreeContext(gvc); }
};

}  // namespace

bool GraphvizAvailable() { return true; }

std::string RenderDot(std::string_view dot, const std::string& format) {
  std::unique_ptr<GVC_t, ContextFree> gvc(gvContext());
  if (!gvc) throw Error("Graphviz: cannot create a context");
  std::string text(dot);  // agmemread wants a NUL-terminated string
  Agraph_t* graph = agmemread(text.c_str());
  if (!graph) throw Error("Graphviz could not parse the generated DOT");
  std::string result;
  int rc = gvLayout(gvc.get(), graph, "dot");
  if (rc == 0) {
    char* data = nullptr;
    unsigned int length = 0;
    rc = gvRenderData(gvc.get(), graph, format.c_str(), &data, &length);
    if (rc == 0 && data) result.assign(data, length);
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc.get(), graph);
  }
  agclose(graph);
  if (rc != 0 || result.empty()) {
    throw Error("Graphviz could not render " + format +
                " (is its plugin installed? `dot -T" + format + "` says); write DOT and pipe it "
                "into `dot -T" + format + "`");
  }
  return result;
}

#else

bool GraphvizAvailable() { return false; }

std::string RenderDot(std::string_view, const std::string& format) {
  throw Error("this pf-dot was built without Graphviz's library (libgvc, Debian's "
              "libgraphviz-dev): write DOT and pipe it into Graphviz: pf-dot ... | dot -T" +
              format + " > graph." + format);
}

#endif

}  // namespace pf
