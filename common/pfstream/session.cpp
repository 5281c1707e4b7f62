// The Session (session.h) wires its four parts together: the parts that name frames and
// unwind stacks read the processes' maps (ProcessMaps) and the binaries' tables
// (BinaryTables), which in turn read the maps; everything else is in the parts.

#include "pfstream/session.h"

namespace pf {

Session::Session(Symbolizer& symbolizer)
    : tables_(maps_, symbolizer),
      unwinder_(maps_, tables_, symbolizer),
      namer_(maps_, tables_, symbolizer) {}

// The prefetch thread stops before the tables it fills go (BinaryTables' destructor).
Session::~Session() = default;

}  // namespace pf
