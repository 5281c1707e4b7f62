#pragma once
// pprof's profile.proto (github.com/google/pprof, proto/profile.proto): the field numbers of
// its messages, one namespace per message, for the reader (pprof.h) and the writer
// (pprof_writer.h), which decode and encode it with protozero, without generated code.

#include <cstdint>

namespace pf::pprof_schema {

namespace profile {
inline constexpr uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4,
                          kFunction = 5, kStringTable = 6, kDropFrames = 7, kKeepFrames = 8,
                          kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11, kPeriod = 12,
                          kComment = 13, kDefaultSampleType = 14, kDocUrl = 15;
}
namespace value_type {
inline constexpr uint32_t kType = 1, kUnit = 2;
}
namespace sample {
inline constexpr uint32_t kLocationId = 1, kValue = 2, kLabel = 3;
}
namespace label {
inline constexpr uint32_t kKey = 1, kStr = 2, kNum = 3, kNumUnit = 4;
}
namespace mapping {
inline constexpr uint32_t kId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4,
                          kFilename = 5, kBuildId = 6, kHasFunctions = 7;
}
namespace location {
inline constexpr uint32_t kId = 1, kMappingId = 2, kAddress = 3, kLine = 4, kIsFolded = 5;
}
namespace line {
inline constexpr uint32_t kFunctionId = 1, kLine = 2;
}
namespace function {
inline constexpr uint32_t kId = 1, kName = 2, kSystemName = 3, kFilename = 4, kStartLine = 5;
}

}  // namespace pf::pprof_schema
