// Tracepoints' formats: written from tracefs as perf record writes them, read back and
// printed through libtraceevent as perf script prints them (trace_formats.h).

#include "pfstream/trace_formats.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <unistd.h>

#include <cerrno>

#include <bit>
#include <cstring>
#include <map>

#include "base/byte_cursor.h"
#include "base/error.h"
#include "base/regular_file.h"

namespace pf {

namespace {

constexpr std::string_view kMagic = "\x17\x08\x44tracing";
constexpr std::string_view kVersion = "0.6";

void Put32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void Put64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }

std::string ReadTracefs(const std::string& dir, const std::string& file) {
  std::string text;
  if (!ReadRegularFile(dir + "/" + file, &text)) {
    throw Error("cannot read " + dir + "/" + file + " (tracepoints need root, or tracefs "
                "readable by this user)");
  }
  return text;
}

// The NUL-terminated string at the cursor.
bool CString(Cursor* c, std::string* s) {
  s->clear();
  for (uint8_t b; c->U8(&b);) {
    if (b == 0) return true;
    s->push_back(static_cast<char>(b));
  }
  return false;
}

// A file of the tracing data: a 64-bit (or, for kallsyms and printk, 32-bit) size, then it.
template <typename Size>
bool File(Cursor* c, std::string* text) {
  uint64_t n;
  if constexpr (sizeof(Size) == 8) {
    if (!c->U64(&n)) return false;
  } else {
    uint32_t n32;
    if (!c->U32(&n32)) return false;
    n = n32;
  }
  std::span<const uint8_t> b;
  if (!c->Bytes(n, &b)) return false;
  text->assign(reinterpret_cast<const char*>(b.data()), b.size());
  return true;
}

}  // namespace

std::string TracefsDir() {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (access((std::string(dir) + "/events").c_str(), F_OK) == 0) return dir;
  }
  return "";
}

bool TracepointId(std::string_view system, std::string_view name, uint64_t* id,
                  std::string* why) {
  const std::string dir = TracefsDir();
  if (dir.empty()) {
    *why = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
    return false;
  }
  const std::string path = dir + "/events/" + std::string(system) + "/" + std::string(name);
  std::string text;
  if (!ReadRegularFile(path + "/id", &text)) {
    *why = access(path.c_str(), F_OK) == 0 || access((dir + "/events").c_str(), R_OK) != 0
               ? "cannot read " + path + "/id (tracepoints need root, or tracefs readable by "
                 "this user)"
               : "no tracepoint " + std::string(system) + ":" + std::string(name) +
                     " (pf-record -l lists them)";
    return false;
  }
  *id = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

std::string TracingData(const std::vector<std::string>& tracepoints) {
  const std::string dir = TracefsDir();
  if (dir.empty()) throw Error("tracefs is not mounted: no tracepoint formats to record");
  TracingFiles files;
  files.header_page = ReadTracefs(dir, "events/header_page");
  files.header_event = ReadTracefs(dir, "events/header_event");
  for (const std::string& tp : tracepoints) {
    size_t colon = tp.find(':');
    std::string system = tp.substr(0, colon);
    files.formats.emplace_back(
        system, ReadTracefs(dir, "events/" + system + "/" + tp.substr(colon + 1) + "/format"));
  }
  ReadRegularFile(dir + "/printk_formats", &files.printk_formats);  // (absent: none)
  return TracingDataOf(files);
}

std::string TracingDataOf(const TracingFiles& files) {
  std::string out(kMagic);
  out += kVersion;
  out += '\0';
  out += static_cast<char>(std::endian::native == std::endian::big);
  out += static_cast<char>(sizeof(long));
  Put32(&out, static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
  using Header = std::pair<const char*, const std::string&>;
  for (const auto& [header, text] :
       {Header{"header_page", files.header_page}, Header{"header_event", files.header_event}}) {
    out += header;
    out += '\0';
    Put64(&out, text.size());
    out += text;
  }
  // The formats by system, ftrace's apart, as perf orders them.
  std::map<std::string, std::vector<const std::string*>> systems;
  for (const auto& [system, format] : files.formats) systems[system].push_back(&format);
  auto put_formats = [&out](const std::vector<const std::string*>& formats) {
    Put32(&out, static_cast<uint32_t>(formats.size()));
    for (const std::string* f : formats) {
      Put64(&out, f->size());
      out += *f;
    }
  };
  auto ftrace = systems.extract("ftrace");
  put_formats(ftrace ? ftrace.mapped() : std::vector<const std::string*>{});
  Put32(&out, static_cast<uint32_t>(systems.size()));
  for (const auto& [system, formats] : systems) {
    out += system;
    out += '\0';
    put_formats(formats);
  }
  Put32(&out, 0);  // kallsyms: none, as perf writes it
  Put32(&out, static_cast<uint32_t>(files.printk_formats.size()));
  out += files.printk_formats;
  Put64(&out, 0);  // saved cmdlines: none (the recording has the comms)
  return out;
}

namespace {

// The tracing data, framed (its files not yet read by libtraceevent).
struct Framed {
  std::string version;
  uint8_t big_endian = 0, long_size = 8;
  uint32_t page_size = 4096;
  std::string header_page;
  std::vector<std::pair<std::string, std::string>> formats;  // (system, format file)
  std::string kallsyms, printk, cmdlines;
};

bool Frame(std::span<const uint8_t> data, Framed* f) {
  Cursor c(data);
  std::span<const uint8_t> magic;
  std::string text, name;
  if (!c.Bytes(kMagic.size(), &magic) ||
      std::string_view(reinterpret_cast<const char*>(magic.data()), magic.size()) != kMagic ||
      !CString(&c, &f->version) || !c.U8(&f->big_endian) || !c.U8(&f->long_size) ||
      !c.U32(&f->page_size) || (f->long_size != 4 && f->long_size != 8)) {
    return false;
  }
  for (const char* header : {"header_page", "header_event"}) {
    if (!CString(&c, &name) || name != header || !File<uint64_t>(&c, &text)) return false;
    if (name == "header_page") f->header_page = text;
  }
  auto formats = [&](const std::string& system) {
    uint32_t n;
    if (!c.U32(&n)) return false;
    for (uint32_t i = 0; i < n; ++i) {
      if (!File<uint64_t>(&c, &text)) return false;
      f->formats.emplace_back(system, text);
    }
    return true;
  };
  uint32_t systems;
  if (!formats("ftrace") || !c.U32(&systems)) return false;
  for (uint32_t i = 0; i < systems; ++i) {
    if (!CString(&c, &name) || !formats(name)) return false;
  }
  // The rest only names addresses and pids in some formats: what is there.
  if (File<uint32_t>(&c, &f->kallsyms) && File<uint32_t>(&c, &f->printk) &&
      f->version >= kVersion) {
    File<uint64_t>(&c, &f->cmdlines);
  }
  return true;
}

tep_handle* NewTep(const Framed& f) {
  tep_handle* tep = tep_alloc();
  if (!tep) return nullptr;
  tep_set_long_size(tep, f.long_size);
  tep_set_page_size(tep, static_cast<int>(f.page_size));
  tep_set_file_bigendian(tep, f.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep, std::endian::native == std::endian::big ? TEP_BIG_ENDIAN
                                                                       : TEP_LITTLE_ENDIAN);
  std::string page = f.header_page;
  tep_parse_header_page(tep, page.data(), page.size(), f.long_size);
  return tep;
}

constexpr uint32_t kExtrasRead = UINT32_MAX;

// The extras (kallsyms, printk formats, cmdlines) and format `i`, as libtraceevent reads them.
void ReadExtras(tep_handle* tep, const Framed& f) {
  if (!f.kallsyms.empty()) tep_parse_kallsyms(tep, f.kallsyms.c_str());
  if (!f.printk.empty()) tep_parse_printk_formats(tep, f.printk.c_str());
  if (!f.cmdlines.empty()) tep_parse_saved_cmdlines(tep, f.cmdlines.c_str());
}

// libtraceevent trusts the format files it reads; a recording's are not to be trusted (a
// malformed one can crash it). So each is first read, and printed once on a record of
// zeros, in a child process that reports which it got through; one the child dies on is
// left out, and the child is started again after it. `*extras`: the extras read safely.
std::vector<bool> SafeFormats(const Framed& f, bool* extras) {
  std::vector<bool> safe(f.formats.size(), false);
  *extras = false;
  size_t from = 0;
  bool extras_tried = false;
  while (from < f.formats.size() || !extras_tried) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return safe;
    pid_t pid = fork();
    if (pid < 0) return safe;
    if (pid == 0) {
      close(fds[0]);
      tep_handle* tep = NewTep(f);
      if (!extras_tried) {
        ReadExtras(tep, f);
        (void)!write(fds[1], &kExtrasRead, 4);
      }
      std::vector<uint8_t> zeros(1 << 16);
      for (size_t i = from; i < f.formats.size(); ++i) {
        const std::string& text = f.formats[i].second;
        const size_t id_at = text.find("\nID: ");
        tep_parse_event(tep, text.data(), text.size(), f.formats[i].first.c_str());
        tep_event* e = id_at == std::string::npos
                           ? nullptr
                           : tep_find_event(tep, std::atoi(text.c_str() + id_at + 5));
        if (e) {
          const uint16_t type = static_cast<uint16_t>(e->id);
          std::memcpy(zeros.data(), &type, 2);
          tep_record record{};
          record.size = static_cast<int>(zeros.size() / 2);
          record.data = zeros.data();
          trace_seq s;
          trace_seq_init(&s);
          tep_print_event(tep, &s, &record, "%s", TEP_PRINT_INFO);
          trace_seq_destroy(&s);
        }
        const uint32_t done = static_cast<uint32_t>(i);
        (void)!write(fds[1], &done, 4);
      }
      _exit(0);
    }
    close(fds[1]);
    size_t next = from;
    for (uint32_t token; read(fds[0], &token, 4) == 4;) {
      if (token == kExtrasRead) {
        *extras = true;
      } else if (token < safe.size()) {
        safe[token] = true;
        next = token + 1;
      }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    extras_tried = true;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
    from = next + 1;  // the format the child died on stays out
  }
  return safe;
}

}  // namespace

std::unique_ptr<TraceFormats> TraceFormats::Parse(std::span<const uint8_t> data) {
  Framed framed;
  if (!Frame(data, &framed)) return nullptr;
  bool extras = false;
  const std::vector<bool> safe = SafeFormats(framed, &extras);
  std::unique_ptr<TraceFormats> f(new TraceFormats);
  f->tep_ = NewTep(framed);
  if (!f->tep_) return nullptr;
  if (extras) ReadExtras(f->tep_, framed);
  for (size_t i = 0; i < framed.formats.size(); ++i) {
    if (!safe[i]) continue;
    const auto& [system, text] = framed.formats[i];
    tep_parse_event(f->tep_, text.data(), text.size(), system.c_str());
  }
  return f;
}

TraceFormats::~TraceFormats() {
  if (tep_) tep_free(tep_);
}

std::string TraceFormats::Name(uint64_t id) const {
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  if (!e || !e->system || !e->name) return "";
  return std::string(e->system) + ":" + e->name;
}

bool TraceFormats::Print(uint64_t id, uint32_t cpu, std::span<const uint8_t> raw,
                         std::string* out) const {
  if (!tep_find_event(tep_, static_cast<int>(id)) || raw.size() > kMaxRaw) return false;
  // libtraceevent reads fields where the format puts them, and strings and arrays where the
  // record's own 16-bit offsets and lengths say, without looking at the record's size: it
  // reads a copy followed by zeros that reach past any of them.
  if (scratch_.empty()) scratch_.assign(kMaxRaw + kReach, 0);
  std::memcpy(scratch_.data(), raw.data(), raw.size());
  tep_record record{};
  record.cpu = static_cast<int>(cpu);
  record.size = static_cast<int>(raw.size());
  record.data = scratch_.data();
  trace_seq s;
  trace_seq_init(&s);
  tep_print_event(tep_, &s, &record, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&s);
  out->append(s.buffer, s.len);
  trace_seq_destroy(&s);
  std::memset(scratch_.data(), 0, raw.size());
  return true;
}

}  // namespace pf
