#pragma once
// CPU lists in the kernel's notation ("0,2-3", as in /sys/devices/system/cpu/online and
// cpuset(7) "List format"), for pf-record's -C option and the online-CPU set.

#include <string>
#include <string_view>
#include <vector>

namespace pf {

/// Parses "0,2-3" into {0, 2, 3} (sorted, without duplicates). Throws pf::UsageError on
/// malformed text, a reversed range or a CPU number above 65535.
std::vector<int> ParseCpuList(std::string_view text);

/// The online CPUs (/sys/devices/system/cpu/online; every configured CPU when unreadable).
std::vector<int> OnlineCpus();

/// The number of CPUs the system is configured for (the highest possible CPU + 1).
int ConfiguredCpus();

}  // namespace pf
