// Fuzz target: the recording reader (perf.data file and pipe formats, pf-record streams)
// through the whole pf-script path: records, session state, sample decoding and text.
// Must never crash, hang or leak; bad input is an error or a shorter output.
#include <cstdint>
#include <string>

#include "base/error.h"
#include "io/output.h"
#include "pfstream/script_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string copy(reinterpret_cast<const char*>(data), size);  // 8-byte aligned by malloc
  try {
    auto src = pf::MemoryInput(copy, "fuzz");
    pf::PerfDataReader reader(*src);
    pf::Symbolizer::Options so;
    so.kallsyms = "/nonexistent/kallsyms";  // the live kernel's symbols would cost 50 ms a run
    so.use_build_id_cache = false;
    so.symfs = "/nonexistent-symfs";  // no binaries: reading them again per input is slow
    pf::Symbolizer symbolizer(so);
    pf::Session session(symbolizer);
    pf::StringSink sink;
    pf::BufferedWriter out(sink);
    pf::ScriptOptions o;
    o.show_mmap_events = o.show_task_events = true;
    pf::WriteScript(reader, session, o, out);
    out.Flush();
  } catch (const pf::Error&) {
  } catch (const pf::UsageError&) {
  }
  return 0;
}
