#pragma once
// Event names as perf spells them ("cpu-clock", "cycles:u", "sched:sched_switch", ...), the
// perf_event_attr each one stands for, and the name perf would print for an attribute, so
// that `perf script` shows pf-record's events under the names it uses for its own recordings;
// and the list of what can be recorded here (pf-record -l, as perf list).
// Names and numbers: linux/perf_event.h (perf_hw_id, perf_sw_ids) and
// tools/perf/util/parse-events.c (the aliases); modifiers: perf-list(1).

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace pf {

/// An event to sample, as parsed from -e.
struct EventSpec {
  std::string name;  // canonical perf name, without modifiers ("cpu-clock")
  uint32_t type = PERF_TYPE_SOFTWARE;
  uint64_t config = PERF_COUNT_SW_CPU_CLOCK;
  bool exclude_user = false;    // ":k"
  bool exclude_kernel = false;  // ":u"
  int precise = 0;              // ":p", ":pp", ":ppp"
  bool hardware() const { return type == PERF_TYPE_HARDWARE; }
  /// SYSTEM:NAME, its config the id tracefs gives it; sampled at every hit (period 1).
  bool tracepoint() const { return type == PERF_TYPE_TRACEPOINT; }
};

/// Parses NAME[:MODIFIERS], MODIFIERS being u, k and up to three p, or a tracepoint
/// SYSTEM:NAME (its id read from tracefs). Throws pf::UsageError for an unknown event,
/// tracepoint or modifier, naming the events that are known, and pf::Error when tracefs
/// cannot be read.
EventSpec ParseEventSpec(std::string_view text);

/// What `pf-record -l` prints, as perf list does: the hardware events this machine counts,
/// the software events, and the tracepoints (when tracefs can be read), one a line.
std::string ListEvents();

/// The default event: cpu-clock, with the precise_ip perf leaves on it when it falls back
/// from cycles:ppp, so that it is printed as perf prints its own default ("cpu-clock:ppp").
EventSpec DefaultEventSpec();

/// The name perf gives an attribute: the event name, then ':' and modifiers
/// (k/u/h when something is excluded, then one p per precise_ip level).
std::string PerfEventName(std::string_view base, const perf_event_attr& attr);

}  // namespace pf
