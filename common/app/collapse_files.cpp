// pf-collapse's entry points (files.h): the inputs are opened one at a time, in order, and
// handed to the collapse module, which reads whatever format each holds; the tree is
// written as folded text, or as pprof's profile.proto or a callgrind file.

#include <memory>
#include <string>
#include <vector>

#include "app/files.h"
#include "callgraph/callgrind_writer.h"
#include "formats/pprof_writer.h"
#include "io/input.h"

namespace pf {

StackTree CollapseFilesToTree(const std::vector<std::string>& inputs,
                              const CollapseOptions& options, ReadReport* report) {
  Collapser c(options, report);
  std::vector<std::string> paths = inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  for (const std::string& p : paths) {
    std::unique_ptr<ByteSource> src = OpenInput(p);
    c.Add(*src);
  }
  return c.TakeTree();
}

StackTree CollapseSourcesToTree(std::vector<std::unique_ptr<ByteSource>>& sources,
                                const CollapseOptions& options, ReadReport* report) {
  Collapser c(options, report);
  for (std::unique_ptr<ByteSource>& src : sources) {
    c.Add(*src);
    src.reset();  // its mapping or buffers are not needed any more
  }
  return c.TakeTree();
}

void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, ReadReport* report) {
  WriteCollapsed(CollapseFilesToTree(inputs, options, report), out, report);
}

void CollapseFilesAs(const std::string& format, bool gzip,
                     const std::vector<std::string>& inputs, const CollapseOptions& options,
                     ByteSink& out, ReadReport* report) {
  StackTree tree = CollapseFilesToTree(inputs, options, report);
  if (tree.saturated()) report->warnings.push_back(SaturationWarning(tree.saturated()));
  if (format == "pprof") {
    WritePprof(tree, out, gzip);
    return;
  }
  BufferedWriter w(out);
  WriteCallgrind(tree, w, "pf-collapse");
  w.Flush();
  out.Commit();
}

}  // namespace pf
