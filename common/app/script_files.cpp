// pf-script's entry point (files.h): opens a recording, sets up the symbolizer and the session
// as the options ask (symfs, demangling, unwinding, inline frames, source lines), prints the
// header perf script --header would, then the text (pfstream/script_output.h).

#include <memory>
#include <string>
#include <vector>

#include "app/files.h"
#include "base/teardown.h"
#include "io/input.h"
#include "pfstream/perf_data.h"
#include "pfstream/session.h"
#include "symbolize/symbolizer.h"

namespace pf {

uint64_t RunScript(const std::string& path, const ScriptOptions& o, ByteSink& sink,
                   ScriptReport* report) {
  std::unique_ptr<ByteSource> src = OpenInput(path);
  PerfDataReader reader(*src);
  Symbolizer::Options so;
  so.symfs = o.symfs;
  so.demangle = o.demangle;
  // Kept, not destroyed, when the process ends after this (base/teardown.h).
  auto symbolizer_owner = std::make_unique<Symbolizer>(so);
  Symbolizer& symbolizer = *symbolizer_owner;
  symbolizer.SetEmbedded(&reader.embedded_symbols());
  symbolizer.SetKernelBuildId(KernelBuildId(reader));
  auto session_owner = std::make_unique<Session>(symbolizer);
  Session& session = *session_owner;
  session.SetUnwindMethod(o.unwind_method);
  session.SetInline(o.inline_frames);
  session.ForgetExited(true);
  bool srcline = false;
  for (const std::string& name : o.fields) srcline |= name == "srcline" || name == "+srcline";
  session.SetSrcline(srcline);
  session.Prefetch(reader);
  BufferedWriter out(sink);
  if (o.header) {
    // The parts of perf script --header that the recording carries.
    std::string h = "# ========\n";
    if (!reader.hostname().empty()) h += "# hostname : " + reader.hostname() + "\n";
    if (!reader.os_release().empty()) h += "# os release : " + reader.os_release() + "\n";
    if (!reader.cmdline().empty()) h += "# cmdline : " + reader.cmdline() + "\n";
    for (const EventAttr& a : reader.attrs()) {
      h += "# event : name = " + a.name + ", type = " + std::to_string(a.type) +
           ", config = " + std::to_string(a.config) + ", sample_type = " +
           std::to_string(a.sample_type) + "\n";
    }
    h += "# ========\n#\n";
    out.Append(h);
  }
  std::vector<std::string> warnings;
  uint64_t n = WriteScript(reader, session, o, out, &warnings);
  out.Flush();
  sink.Commit();
  if (report) {
    report->truncated = reader.truncated();
    report->truncated_warning = TruncatedWarning(src->name(), reader, n, "printed");
    report->skipped = SkippedRecordsWarning(path, reader);
    report->warnings = std::move(warnings);
  }
  session.StopPrefetch();
  KeepUntilExit(std::move(session_owner), std::move(symbolizer_owner));
  return n;
}

}  // namespace pf
