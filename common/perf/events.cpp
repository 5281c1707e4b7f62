// Event names (events.h). A table of the events perf names (software, hardware and their
// aliases), each with the perf_event_attr type and config it stands for; a spec is a name
// from it and perf's modifiers (:u, :k, :p...). The reverse, the name perf prints for an
// attribute, is what makes `perf script` show pf-record's events as it shows its own.

#include "perf/events.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "pfstream/trace_formats.h"

namespace pf {

namespace {

struct Known {
  const char* name;
  const char* alias;
  uint32_t type;
  uint64_t config;
};

constexpr Known kEvents[] = {
    {"cpu-clock", nullptr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", nullptr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", nullptr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", nullptr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"ref-cycles", nullptr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

std::string KnownNames() {
  std::string s;
  for (const Known& k : kEvents) {
    if (!s.empty()) s += ", ";
    s += k.name;
  }
  return s;
}

}  // namespace

EventSpec ParseEventSpec(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view name = text.substr(0, colon);
  std::string_view mods = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  EventSpec spec;
  bool found = false;
  for (const Known& k : kEvents) {
    if (name == k.name || (k.alias && name == k.alias)) {
      spec.name = k.name;
      spec.type = k.type;
      spec.config = k.config;
      found = true;
      break;
    }
  }
  // SUBSYSTEM:EVENT (sched:sched_switch) is a tracepoint, not an event with modifiers.
  if (!found && !mods.empty() && mods.find_first_not_of("ukp") != std::string_view::npos) {
    EventSpec tp;
    std::string why;
    if (!TracepointId(name, mods, &tp.config, &why)) {
      if (why.starts_with("no tracepoint")) throw UsageError(why);
      throw Error(why);
    }
    tp.name = std::string(text);
    tp.type = PERF_TYPE_TRACEPOINT;
    return tp;
  }
  if (!found) {
    throw UsageError("unknown event '" + std::string(name) + "'; known events: " + KnownNames());
  }
  bool user = false, kernel = false;
  for (char c : mods) {
    if (c == 'u') {
      user = true;
    } else if (c == 'k') {
      kernel = true;
    } else if (c == 'p' && spec.precise < 3) {
      ++spec.precise;
    } else {
      throw UsageError("unknown modifier in event '" + std::string(text) +
                       "': use u (user space), k (kernel) and p, pp or ppp");
    }
  }
  if (user != kernel) {
    spec.exclude_kernel = user;
    spec.exclude_user = kernel;
  }
  return spec;
}

EventSpec DefaultEventSpec() {
  EventSpec spec;
  spec.name = "cpu-clock";
  spec.precise = 3;
  return spec;
}

namespace {

// Whether this machine counts the event (perf list leaves out the hardware events it does
// not): a counter on this process, user space only, opened and closed.
bool Counts(uint32_t type, uint64_t config) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = type;
  a.config = config;
  a.disabled = 1;
  a.exclude_kernel = a.exclude_hv = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  if (fd < 0) return false;
  close(fd);
  return true;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void Line(std::string* out, const std::string& name, const char* kind) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-50s [%s]\n", name.c_str(), kind);
  *out += buf;
}

}  // namespace

std::string ListEvents() {
  std::string out;
  for (const Known& k : kEvents) {
    if (k.type != PERF_TYPE_HARDWARE || !Counts(k.type, k.config)) continue;
    Line(&out, k.alias ? std::string(k.name) + " OR " + k.alias : k.name, "Hardware event");
  }
  for (const Known& k : kEvents) {
    if (k.type != PERF_TYPE_SOFTWARE) continue;
    Line(&out, k.alias ? std::string(k.name) + " OR " + k.alias : k.name, "Software event");
  }
  const std::string tracefs = TracefsDir();
  for (const std::string& system : tracefs.empty() ? std::vector<std::string>{}
                                                   : Entries(tracefs + "/events")) {
    for (const std::string& event : Entries(tracefs + "/events/" + system)) {
      if (access((tracefs + "/events/" + system + "/" + event + "/id").c_str(), F_OK) == 0) {
        Line(&out, system + ":" + event, "Tracepoint event");
      }
    }
  }
  return out;
}

std::string PerfEventName(std::string_view base, const perf_event_attr& a) {
  if (a.type == PERF_TYPE_TRACEPOINT) return std::string(base);  // perf names them so
  std::string mods;
  if (a.exclude_kernel || a.exclude_user || a.exclude_hv) {
    if (!a.exclude_kernel) mods += 'k';
    if (!a.exclude_user) mods += 'u';
    if (!a.exclude_hv) mods += 'h';
  }
  mods.append(a.precise_ip, 'p');
  std::string name(base);
  if (!mods.empty()) name += ":" + mods;
  return name;
}

}  // namespace pf
