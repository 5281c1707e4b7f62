#pragma once
// Gzip output: a whole buffer deflated into a sink as one gzip member (RFC 1952), with the
// header's modification time 0 and no file name, so the same bytes in give the same bytes
// out (pprof's profile.proto is conventionally gzipped: pf-collapse --format=pprof).

#include <string_view>

#include "io/output.h"

namespace pf {

/// Writes `data` gzipped (zlib's default level) to `out`, in chunks. Does not Commit.
/// Throws pf::Error when zlib fails (out of memory).
void WriteGzip(std::string_view data, ByteSink& out);

}  // namespace pf
