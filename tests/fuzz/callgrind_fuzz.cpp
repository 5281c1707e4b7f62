// Fuzz target: the callgrind reader (formats/callgrind.h), pf-dot's graph of its call edges
// written as DOT, the merge of --separate-callers contexts and the stacks rebuilt from them.
// Must never crash, hang or leak; the call graph's total is the sum of the self costs.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "formats/callgrind.h"
#include "io/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto src = pf::MemoryInput(text, "fuzz");
    pf::ReadReport report;
    pf::FunctionGraph graph = pf::ReadCallgrind(*src, &report);
    pf::CallGraphOptions o;
    o.node_thres = 0;
    o.edge_thres = 0;
    o.nodecount = 50;
    for (int c = 0; c < graph.columns(); ++c) {
      const std::string& name = graph.sample_types()[c].name;
      pf::CallGraph g = pf::BuildFunctionCallGraph(graph, o, name);
      if (g.total != graph.Total(graph.FindSampleType(name))) std::abort();
      pf::StringSink sink;
      pf::BufferedWriter w(sink);
      pf::WriteDot(g, o, w);
      w.Flush();
    }
    pf::FunctionGraph merged = pf::MergeCallerContexts(graph);
    if (merged.Total(0) != graph.Total(0) && graph.saturated() == 0) std::abort();
    pf::StackTree tree = pf::CallgrindStacks(graph, "fuzz");
    if (tree.Total(tree.columns() - 1) != graph.Total(0) && graph.saturated() == 0) std::abort();
  } catch (const pf::Error&) {
  }
  return 0;
}
